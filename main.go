// Command slatec rewrites CUDA kernels so that several of them can share one GPU spatially.
package main

import (
	"os"

	"github.com/slatec/slatec/cli"
)

func main() { os.Exit(cli.Execute()) }
