package kruntimes_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/kruntimes/kruntimes/sdk/go/kruntimes"
)

// A task: create it, wait for it, read its result.
func Example() {
	ctx := context.Background()
	c, err := kruntimes.NewFromKubeconfig(ctx, "")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	res, err := c.RunTask(ctx, kruntimes.TaskSpec{
		Runtime: "bash",
		Script:  `echo "hello $WHO"; echo "greeting=hi" >> "$KRUNTIME_OUTPUTS"`,
		Env:     map[string]string{"WHO": "go"},
		Timeout: 30 * time.Second,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Phase, res.ExitCode, res.Outputs["greeting"], res.Stdout)
}

// A function: create it once, call it many times.
func ExampleClient_InvokeJSON() {
	ctx := context.Background()
	c, err := kruntimes.NewFromKubeconfig(ctx, "")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	fn, err := c.CreateRun(ctx, kruntimes.FunctionSpec{
		Runtime: "python",
		Source:  "def handler(request):\n    return {'hello': request.json()['name']}\n",
	})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := c.WaitReady(ctx, fn.Name); err != nil {
		log.Fatal(err)
	}
	callCtx, cancel := context.WithTimeout(ctx, 5*time.Second) // the call's deadline
	defer cancel()
	resp, err := c.InvokeJSON(callCtx, fn.Name, map[string]string{"name": "go"})
	var he *kruntimes.HandlerError
	switch {
	case errors.As(err, &he):
		log.Fatalf("the handler raised %s: %s\n%s", he.Type, he.Message, he.Traceback)
	case err != nil:
		log.Fatal(err)
	}
	var out struct{ Hello string }
	if err := resp.JSON(&out); err != nil {
		log.Fatal(err)
	}
	fmt.Println(out.Hello)
}

// A session: an exclusive workspace driven step by step.
func ExampleSession() {
	ctx := context.Background()
	c, err := kruntimes.NewFromKubeconfig(ctx, "")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	s, err := c.CreateSession(ctx, kruntimes.SessionSpec{Runtime: "bash", IdleTimeout: 15 * time.Minute})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close() // drain; s.Cancel() ends it at once
	if err := s.WaitReady(ctx); err != nil {
		log.Fatal(err)
	}
	if _, err := s.WriteFile(ctx, "data/in.txt", []byte("b\na\n"), kruntimes.WithParents()); err != nil {
		log.Fatal(err)
	}
	exit, err := s.ExecTo(ctx, kruntimes.Shell("sort data/in.txt"), os.Stdout, os.Stderr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("exit code", exit.ExitCode)
	for fi, err := range s.ListFiles(ctx, "data") {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(fi.Name, fi.Size)
	}
}

// Busy and unavailable calls say when to retry.
func ExampleRetryAfter() {
	ctx := context.Background()
	c, err := kruntimes.NewFromKubeconfig(ctx, "")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	for {
		resp, err := c.Invoke(ctx, "hello", []byte("ping"))
		if wait, ok := kruntimes.RetryAfter(err); ok {
			time.Sleep(wait)
			continue
		}
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(string(resp.Body))
		return
	}
}
