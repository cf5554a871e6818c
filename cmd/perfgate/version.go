package main

import (
	"fmt"
	"io"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/perfgate/perfgate/internal/version"
)

func newVersionCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print perfgate's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := fmt.Fprintln(stdout, versionLine())
			return err
		},
	}
}

// versionLine is what perfgate version and perfgate --version print:
// "perfgate v1.2.0 (go1.25.1 linux/amd64)".
func versionLine() string {
	return fmt.Sprintf("perfgate %s (%s %s/%s)", version.String(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
