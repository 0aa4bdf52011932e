package kruntimes

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"connectrpc.com/connect"

	gatewayv1 "github.com/kruntimes/kruntimes/sdk/go/gen/kruntimes/gateway/v1"
)

// InvokeOption configures one [Client.Invoke].
type InvokeOption func(*invokeConfig)

type invokeConfig struct {
	contentType string
	headers     map[string]string
}

// WithContentType sets the request body's content type (default application/octet-stream for
// [Client.Invoke], application/json for [Client.InvokeJSON]).
func WithContentType(ct string) InvokeOption {
	return func(c *invokeConfig) { c.contentType = ct }
}

// WithHeader passes a header to the handler (names are lower-cased; python handlers read
// request.headers, bash handlers $KRUNTIME_HEADER_<NAME>).
func WithHeader(name, value string) InvokeOption {
	return func(c *invokeConfig) {
		if c.headers == nil {
			c.headers = map[string]string{}
		}
		c.headers[strings.ToLower(name)] = value
	}
}

// Response is what a function's handler returned.
type Response struct {
	// Status is the status the handler chose (200 when it returned a plain value).
	Status int
	// ContentType is the body's content type.
	ContentType string
	// Body is the response body.
	Body []byte
	// Headers are the headers the handler set.
	Headers map[string]string
	// InvocationID identifies the invocation in the function's logs (LogOptions.Call).
	InvocationID string
	// Duration is the time spent in the handler.
	Duration time.Duration
}

// JSON decodes the body into v.
func (r *Response) JSON(v any) error {
	if err := json.Unmarshal(r.Body, v); err != nil {
		return &Error{Code: CodeInvalidArgument, Op: "decode response", Message: "the response body is not the JSON expected: " + err.Error(), Err: err}
	}
	return nil
}

// Invoke calls the function Run name once with body through the gateway and returns what its
// handler answered. ctx's deadline becomes the call's deadline (the gateway caps it at the Run's
// invocationTimeout; without one the gateway's default, 30 s, applies). A handler that raised or
// exited non-zero is an *Error with CodeHandlerError and its [HandlerError]; a full queue is
// CodeBusy with RetryAfter; a Run that is not Ready (or not a function) is CodeNotReady. Calls
// that failed with NotReady, Busy or Unavailable never reached the handler and are safe to retry.
func (c *Client) Invoke(ctx context.Context, name string, body []byte, opts ...InvokeOption) (*Response, error) {
	return c.invoke(ctx, name, body, "", opts)
}

// InvokeJSON is [Client.Invoke] with v encoded as JSON (content type application/json).
// Decode the answer with [Response.JSON].
func (c *Client) InvokeJSON(ctx context.Context, name string, v any, opts ...InvokeOption) (*Response, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, &Error{Code: CodeInvalidArgument, Op: "invoke", Namespace: c.namespace, Run: name, Message: "cannot encode the request as JSON: " + err.Error(), Err: err}
	}
	return c.invoke(ctx, name, body, "application/json", opts)
}

func (c *Client) invoke(ctx context.Context, name string, body []byte, contentType string, opts []InvokeOption) (*Response, error) {
	t := c.target("invoke", name)
	cfg := invokeConfig{contentType: contentType}
	for _, o := range opts {
		o(&cfg)
	}
	gw, err := c.gateway(ctx, t)
	if err != nil {
		return nil, err
	}
	t.via = gw.via
	res, err := gw.functions.Invoke(ctx, connect.NewRequest(&gatewayv1.InvokeRequest{
		Namespace:   c.namespace,
		Run:         name,
		Body:        body,
		ContentType: cfg.contentType,
		Headers:     cfg.headers,
	}))
	if err != nil {
		return nil, gatewayError(err, t)
	}
	m := res.Msg
	return &Response{
		Status:       int(m.GetStatus()),
		ContentType:  m.GetContentType(),
		Body:         m.GetBody(),
		Headers:      m.GetHeaders(),
		InvocationID: m.GetInvocationId(),
		Duration:     time.Duration(m.GetDurationMicros()) * time.Microsecond,
	}, nil
}
