package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/slatec/slatec/serve"
	"github.com/slatec/slatec/serve/client"
)

func init() { register(newTopCmd) }

func newTopCmd() *cobra.Command {
	var socket string
	var asJSON bool
	var watch time.Duration
	cmd := &cobra.Command{
		Use:   "top",
		Short: "Show a running slatec serve daemon: who holds which SMs, queues, resizes",
		Long: `top asks the slatec serve daemon on the socket for its state and prints it:
the clients (pid, name), the SM range each launch holds, queue lengths, clients
marked stuck, and the recent resizes with their latencies. --watch repeats.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if watch <= 0 {
				return runTop(cmd, socket, asJSON)
			}
			for {
				if err := runTop(cmd, socket, asJSON); err != nil {
					return err
				}
				time.Sleep(watch)
				if !asJSON {
					fmt.Fprintln(cmd.OutOrStdout())
				}
			}
		},
	}
	cmd.Flags().StringVar(&socket, "socket", "", "socket path (default as slatec serve)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the state as JSON")
	cmd.Flags().DurationVar(&watch, "watch", 0, "print again at this interval (e.g. 1s)")
	return cmd
}

func runTop(cmd *cobra.Command, socket string, asJSON bool) error {
	if socket == "" {
		socket = serve.DefaultSocket()
	}
	c, err := client.Dial(socket)
	if err != nil {
		return codeError{exitInput, fmt.Errorf("no slatec serve daemon on %s: %v", socket, err)}
	}
	defer c.Abort()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	st, err := c.Status(ctx)
	if err != nil {
		return codeError{exitInput, fmt.Errorf("status from %s: %w", socket, err)}
	}
	out := cmd.OutOrStdout()
	if asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(st)
	}
	st.WriteText(out)
	return nil
}
