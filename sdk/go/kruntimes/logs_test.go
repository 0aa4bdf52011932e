package kruntimes

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func record(t *testing.T, fields map[string]any) string {
	t.Helper()
	base := map[string]any{"level": 30, "time": 1, "msg": "output", "run": "r", "runUID": "u1", "namespace": "ns", "attempt": 1, "stream": "stdout", "line": "hi"}
	for k, v := range fields {
		if v == nil {
			delete(base, k)
		} else {
			base[k] = v
		}
	}
	b, err := json.Marshal(base)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParseOutputLine(t *testing.T) {
	got, ok := parseOutputLine(record(t, nil))
	if want := (outputLine{runUID: "u1", attempt: 1, stream: Stdout, line: "hi"}); !ok || got != want {
		t.Fatalf("got %+v %v", got, ok)
	}
	if got, ok := parseOutputLine(record(t, map[string]any{"stream": "stderr", "line": ""})); !ok || got.stream != Stderr || got.line != "" {
		t.Fatalf("stderr, empty line: %+v %v", got, ok)
	}
	if got, _ := parseOutputLine(record(t, map[string]any{"invocation": "inv-1"})); got.call != "inv-1" {
		t.Fatalf("invocation: %+v", got)
	}
	if got, _ := parseOutputLine(record(t, map[string]any{"operation": "op-7"})); got.call != "op-7" {
		t.Fatalf("operation: %+v", got)
	}
	if got, _ := parseOutputLine(record(t, map[string]any{"line": `{"msg":"output"}`})); got.line != `{"msg":"output"}` {
		t.Fatalf("JSON inside a line: %+v", got)
	}
	for name, text := range map[string]string{
		"other message":  record(t, map[string]any{"msg": "run started"}),
		"plain text":     "output: plain text",
		"truncated JSON": `{"msg":"output",`,
		"stdin stream":   record(t, map[string]any{"stream": "stdin"}),
		"string attempt": record(t, map[string]any{"attempt": "1"}),
		"number line":    record(t, map[string]any{"line": 5}),
		"no run UID":     record(t, map[string]any{"runUID": nil}),
		"float attempt":  record(t, map[string]any{"attempt": 1.5}),
	} {
		if o, ok := parseOutputLine(text); ok {
			t.Errorf("%s: parsed as %+v", name, o)
		}
	}
}

// A session's audit record is one stderr line with its arguments in the order logged.
func TestParseAuditLine(t *testing.T) {
	audit := `{"level":30,"time":"t","component":"runtimed","pod":"p","run":"s","runUID":"u1","namespace":"ns","attempt":1,"audit":true,"caller":"system:serviceaccount:team:agent","op":"exec","result":"ok","durationMs":26.5,"operation":"op-1","argv":["echo","hi"],"workingDir":"","msg":"session operation"}`
	got, ok := parseOutputLine(audit)
	want := outputLine{runUID: "u1", attempt: 1, stream: Stderr, call: "op-1",
		line: `audit: exec by system:serviceaccount:team:agent: ok (26.5 ms) {"argv":["echo","hi"],"workingDir":""}`}
	if !ok || got != want {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if _, ok := parseOutputLine(`{"audit":false,"msg":"session operation","runUID":"u1","op":"exec","attempt":1}`); ok {
		t.Fatal("audit false is not a record")
	}
	bare, ok := parseOutputLine(`{"audit":true,"msg":"session operation","runUID":"u1","op":"stat","attempt":2,"result":"NotFound"}`)
	if !ok || bare.line != "audit: stat by (unknown): NotFound" || bare.attempt != 2 || bare.call != "" {
		t.Fatalf("bare audit: %+v", bare)
	}
}

func TestTailsAndSince(t *testing.T) {
	cases := map[string][]string{"a\nb\n": {"a", "b"}, "a\n\nb": {"a", "", "b"}, "": nil}
	for in, want := range cases {
		if got := tailLines(in); !reflect.DeepEqual(got, want) {
			t.Errorf("tailLines(%q) = %q, want %q", in, got, want)
		}
	}
	created := metav1.NewTime(time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC))
	if got := sinceCreation(created); got != "2026-12-03T05:59:59Z" {
		t.Fatalf("since %q", got)
	}
	if got := sinceCreation(metav1.Time{}); got != "" {
		t.Fatalf("zero time: %q", got)
	}
}

func TestDurationStrings(t *testing.T) {
	for d, want := range map[time.Duration]string{
		90 * time.Second: "1m30s", 30 * time.Minute: "30m", 2 * time.Hour: "2h", 90 * time.Minute: "1h30m",
		1500 * time.Millisecond: "1.5s", time.Millisecond: "1ms", 0: "", time.Hour + time.Second: "1h0m1s",
	} {
		if got, err := optDuration("X", d); err != nil || got != want {
			t.Errorf("%s: got %q %v, want %q", d, got, err, want)
		}
	}
	if durationMillis(1500*time.Microsecond) != 2 || durationMillis(0) != 0 || durationMillis(-time.Second) != 0 {
		t.Error("durationMillis rounds up, 0 and below are 0")
	}
}
