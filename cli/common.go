package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/slatec/slatec/diag"
)

// readInput reads a file, or standard input for "-".
func readInput(cmd *cobra.Command, path string) (name string, src []byte, err error) {
	if path == "-" {
		src, err = io.ReadAll(cmd.InOrStdin())
		return "<stdin>", src, err
	}
	src, err = os.ReadFile(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return path, nil, fmt.Errorf("%s: %v", path, pe.Err)
		}
	}
	return path, src, err
}

// printDiags writes diagnostics to stderr in text form.
func printDiags(cmd *cobra.Command, ds []diag.Diagnostic) { diag.Write(cmd.ErrOrStderr(), ds) }

// writeJSON writes v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func sortStrings(s []string) { sort.Strings(s) }

func jsonBytes(v any) ([]byte, error) {
	var b strings.Builder
	if err := writeJSON(&b, v); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}
