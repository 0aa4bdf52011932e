module github.com/kruntimes/kruntimes/sdk/go

go 1.26.0

require (
	connectrpc.com/connect v1.21.1 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)
