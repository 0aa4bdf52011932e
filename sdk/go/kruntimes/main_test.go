package kruntimes

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"testing"
)

// TestMain lets the test binary stand in for `kubectl port-forward` (the local test cluster's
// node agent serves no port-forward): a wrapper script sets KRUNTIMES_TEST_KUBECTL_SHIM and runs
// this binary with kubectl's arguments.
func TestMain(m *testing.M) {
	if os.Getenv("KRUNTIMES_TEST_KUBECTL_SHIM") == "1" {
		os.Exit(kubectlShim(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// kubectlShim records its arguments and pid (SHIM_ARGS_FILE), listens on a free loopback port,
// prints kubectl's "Forwarding from" line and relays every connection to FORWARD_TO.
func kubectlShim(args []string) int {
	if len(args) < 5 || args[0] != "port-forward" {
		fmt.Fprintf(os.Stderr, "kubectl shim: unexpected arguments %q\n", args)
		return 2
	}
	if os.Getenv("SHIM_FAIL") != "" {
		fmt.Fprintln(os.Stderr, "error: pods \"x\" is forbidden: User cannot create resource \"pods/portforward\"")
		return 1
	}
	rec, _ := json.Marshal(map[string]any{"args": args, "pid": os.Getpid()})
	if f := os.Getenv("SHIM_ARGS_FILE"); f != "" {
		if err := os.WriteFile(f, rec, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("Forwarding from 127.0.0.1:%d -> %s\n", ln.Addr().(*net.TCPAddr).Port, strings.TrimPrefix(args[4], ":"))
	to := os.Getenv("FORWARD_TO")
	for {
		c, err := ln.Accept()
		if err != nil {
			return 1
		}
		go func() {
			defer c.Close()
			up, err := net.Dial("tcp", to)
			if err != nil {
				return
			}
			defer up.Close()
			go func() { _, _ = io.Copy(up, c) }()
			_, _ = io.Copy(c, up)
		}()
	}
}

// shimKubectl writes an executable that runs this test binary as kubectl, relaying to forwardTo
// and recording its arguments in argsFile.
func shimKubectl(t *testing.T, forwardTo, argsFile string, fail bool) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := fmt.Sprintf("KRUNTIMES_TEST_KUBECTL_SHIM=1 FORWARD_TO=%q SHIM_ARGS_FILE=%q", forwardTo, argsFile)
	if fail {
		env += " SHIM_FAIL=1"
	}
	path := t.TempDir() + "/kubectl"
	script := fmt.Sprintf("#!/bin/sh\n%s exec %q \"$@\"\n", env, self)
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}
