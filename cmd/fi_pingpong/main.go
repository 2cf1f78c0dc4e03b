package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	_ "github.com/gofabric/fabric/prov/all" // every provider
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run parses args, runs the requested side(s) and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	prog := filepath.Base(os.Args[0])
	o, err := parseArgs(prog, args, stderr)
	if err != nil {
		return exitCode(err)
	}
	if o.local {
		return runLocal(o, stdout, stderr)
	}
	if err := runPingpong(o, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return exitCode(err)
	}
	return 0
}
