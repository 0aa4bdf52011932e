package kruntimes

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
)

// specJSON is the Run's spec as the API receives it.
func specJSON(t *testing.T, b RunBuilder) (*Run, string) {
	t.Helper()
	r, err := b.BuildRun("team")
	if err != nil {
		t.Fatal(err)
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(r)
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(obj["spec"])
	return r, string(js)
}

func TestTaskSpec(t *testing.T) {
	r, js := specJSON(t, TaskSpec{
		Runtime: "bash", Script: "echo hi", Env: map[string]string{"B": "2", "A": "1"},
		Timeout: 90 * time.Second, Retries: 2, RetryOn: []string{"NonZeroExit"}, TTL: 1500 * time.Millisecond,
		Labels: map[string]string{"team": "x"},
	})
	want := `{"env":[{"name":"A","value":"1"},{"name":"B","value":"2"}],"mode":{"task":{}},"retryPolicy":{"maxAttempts":3,"retryOn":["NonZeroExit"]},"runtime":"bash","source":{"inline":"echo hi"},"timeout":"1m30s","ttlSecondsAfterFinished":2}`
	if js != want {
		t.Fatalf("spec:\n%s\nwant\n%s", js, want)
	}
	if r.GenerateName != "bash-" || r.Name != "" || r.Namespace != "team" || r.APIVersion != APIVersion || r.Kind != RunKind || r.Labels["team"] != "x" {
		t.Fatalf("meta: %+v %+v", r.ObjectMeta, r.TypeMeta)
	}
	_, js = specJSON(t, TaskSpec{Runtime: "bash", Entrypoint: "/opt/run.sh", Args: []string{"a", "b"}, Name: "nightly"})
	if want := `{"mode":{"task":{"args":["a","b"],"entrypoint":"/opt/run.sh"}},"runtime":"bash"}`; js != want {
		t.Fatalf("entrypoint spec:\n%s\nwant\n%s", js, want)
	}
}

func TestTaskSpecMistakes(t *testing.T) {
	cases := map[string]TaskSpec{
		"no runtime":          {Script: "x"},
		"bad runtime":         {Runtime: "Bash", Script: "x"},
		"no input":            {Runtime: "bash"},
		"script and args":     {Runtime: "bash", Script: "x", Args: []string{"a"}},
		"script and entry":    {Runtime: "bash", Script: "x", Entrypoint: "/a"},
		"bad name":            {Runtime: "bash", Script: "x", Name: "Not_A_Name"},
		"bad env name":        {Runtime: "bash", Script: "x", Env: map[string]string{"1X": "v"}},
		"sub-millisecond":     {Runtime: "bash", Script: "x", Timeout: time.Microsecond},
		"too many retries":    {Runtime: "bash", Script: "x", Retries: 10},
		"negative ttl":        {Runtime: "bash", Script: "x", TTL: -time.Second},
		"source too long":     {Runtime: "bash", Script: strings.Repeat("x", maxInlineSource+1)},
		"negative retries":    {Runtime: "bash", Script: "x", Retries: -1},
		"env name with a dot": {Runtime: "bash", Script: "x", Env: map[string]string{"A.B": "v"}},
	}
	for name, spec := range cases {
		_, err := spec.BuildRun("ns")
		if !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s: got %v, want an InvalidArgument error", name, err)
		}
	}
}

func TestFunctionSpec(t *testing.T) {
	_, js := specJSON(t, FunctionSpec{
		Runtime: "python", Source: "def handler(r):\n    return 1\n", Handler: "handler", Concurrency: 4,
		IdleTimeout: 30 * time.Minute, InvocationTimeout: 10 * time.Second, MaxRequestBytes: 4 << 20, Timeout: 24 * time.Hour,
	})
	want := `{"mode":{"function":{"concurrency":4,"handler":"handler","idleTimeout":"30m","invocationTimeout":"10s","maxRequestBytes":4194304}},"runtime":"python","source":{"inline":"def handler(r):\n    return 1\n"},"timeout":"24h"}`
	if js != want {
		t.Fatalf("spec:\n%s\nwant\n%s", js, want)
	}
	for name, spec := range map[string]FunctionSpec{
		"no source":        {Runtime: "python"},
		"bad handler":      {Runtime: "python", Source: "x", Handler: "a-b"},
		"concurrency":      {Runtime: "python", Source: "x", Concurrency: 65},
		"request bytes":    {Runtime: "python", Source: "x", MaxRequestBytes: 17 << 20},
		"invocation limit": {Runtime: "python", Source: "x", InvocationTimeout: 16 * time.Minute},
	} {
		if _, err := spec.BuildRun("ns"); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s: got %v", name, err)
		}
	}
}

func TestSessionSpec(t *testing.T) {
	r, js := specJSON(t, SessionSpec{IdleTimeout: 15 * time.Minute, MaxQueuedOperations: 8, MaxOperationTimeout: 10 * time.Minute, DefaultOperationTimeout: time.Minute, Timeout: 2 * time.Hour})
	want := `{"mode":{"session":{"defaultOperationTimeout":"1m","idleTimeout":"15m","maxOperationTimeout":"10m","maxQueuedOperations":8}},"runtime":"bash","timeout":"2h"}`
	if js != want {
		t.Fatalf("spec:\n%s\nwant\n%s", js, want)
	}
	if r.GenerateName != "bash-session-" || r.Mode() != ModeSession {
		t.Fatalf("generateName %q mode %q", r.GenerateName, r.Mode())
	}
	_, js = specJSON(t, SessionSpec{Runtime: "python"})
	if want := `{"mode":{"session":{}},"runtime":"python"}`; js != want {
		t.Fatalf("minimal:\n%s\nwant\n%s", js, want)
	}
	_, js = specJSON(t, SessionSpec{Env: map[string]string{"B": "2", "A": "1"}})
	if want := `{"env":[{"name":"A","value":"1"},{"name":"B","value":"2"}],"mode":{"session":{}},"runtime":"bash"}`; js != want {
		t.Fatalf("env:\n%s\nwant\n%s", js, want)
	}
	for name, spec := range map[string]SessionSpec{
		"queue":           {MaxQueuedOperations: 2000},
		"max op timeout":  {MaxOperationTimeout: 2 * time.Hour},
		"default above":   {DefaultOperationTimeout: 10 * time.Minute, MaxOperationTimeout: time.Minute},
		"idle sub-millis": {IdleTimeout: time.Nanosecond},
	} {
		if _, err := spec.BuildRun("ns"); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s: got %v", name, err)
		}
	}
}

// A Run written by hand builds as itself, in the client's namespace when it names none, and is
// not changed by CreateRun's additions.
func TestRunBuildsAsItself(t *testing.T) {
	code := int32(3)
	in := &Run{Spec: RunSpec{Runtime: "bash", Mode: RunModeSpec{Task: &TaskMode{Args: []string{"echo hi"}}}}, Status: RunStatus{ExitCode: &code, Outputs: map[string]string{"a": "b"}}}
	in.Name = "mine"
	out, err := in.BuildRun("team")
	if err != nil {
		t.Fatal(err)
	}
	if out.Namespace != "team" || out.APIVersion != APIVersion || out.Kind != RunKind || out.Name != "mine" {
		t.Fatalf("built: %+v", out.ObjectMeta)
	}
	out.Spec.Mode.Task.Args[0] = "changed"
	*out.Status.ExitCode = 9
	out.Status.Outputs["a"] = "c"
	if in.Spec.Mode.Task.Args[0] != "echo hi" || *in.Status.ExitCode != 3 || in.Status.Outputs["a"] != "b" || in.Namespace != "" {
		t.Fatal("BuildRun shares state with the Run it copied")
	}
}

func TestResult(t *testing.T) {
	code := int32(3)
	r := &Run{Status: RunStatus{Phase: PhaseFailed, Reason: "NonZeroExit", ExitCode: &code, StdoutTail: "a\n", Attempt: 1}}
	res := r.Result()
	if res.Succeeded() || res.ExitCode != 3 || res.Stdout != "a\n" || res.Outputs == nil || res.Attempt != 1 {
		t.Fatalf("result: %+v", res)
	}
	pending := (&Run{}).Result()
	if pending.Phase != PhasePending || pending.ExitCode != -1 {
		t.Fatalf("pending: %+v", pending)
	}
	if !PhaseCancelled.Terminal() || PhaseReady.Terminal() || PhaseFinalizing.Terminal() {
		t.Fatal("Terminal")
	}
}

func TestConditions(t *testing.T) {
	r := &Run{Status: RunStatus{Phase: PhaseRunning}}
	r.Status.Conditions = append(r.Status.Conditions, metaCondition("Scheduled", "True"), metaCondition("Ready", "False"))
	if !InPhase(PhaseScheduled, PhaseRunning)(r) || InPhase(PhaseReady)(r) {
		t.Fatal("InPhase")
	}
	if !ConditionTrue("Scheduled")(r) || ConditionTrue("Ready")(r) || ConditionTrue("Registered")(r) {
		t.Fatal("ConditionTrue")
	}
}
