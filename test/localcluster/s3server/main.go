// Command s3server is the S3-compatible server the kruntimes test harness starts: gofakes3 (MIT)
// with its filesystem backend, so large objects sit on disk rather than in memory, on a loopback
// address. It refuses requests whose access key is not the one it was started with (gofakes3 does
// not verify signatures; checking the key id catches clients that send no or wrong credentials).
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3afero"
	"github.com/spf13/afero"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address (host:port; port 0 picks a free one)")
	dir := flag.String("dir", "", "data directory (buckets and metadata)")
	accessKey := flag.String("access-key", "", "the only access key id accepted")
	buckets := flag.String("buckets", "", "comma-separated buckets to create at start")
	flag.Parse()
	if *dir == "" || *accessKey == "" {
		fmt.Fprintln(os.Stderr, "s3server: --dir and --access-key are required")
		os.Exit(2)
	}
	if err := os.MkdirAll(*dir, 0o700); err != nil {
		log.Fatalf("s3server: %v", err)
	}
	backend, err := s3afero.MultiBucket(afero.NewBasePathFs(afero.NewOsFs(), *dir))
	if err != nil {
		log.Fatalf("s3server: backend: %v", err)
	}
	for _, b := range strings.Split(*buckets, ",") {
		if b == "" {
			continue
		}
		if ok, _ := backend.BucketExists(b); !ok {
			if err := backend.CreateBucket(b); err != nil {
				log.Fatalf("s3server: create bucket %s: %v", b, err)
			}
		}
	}
	faker := gofakes3.New(backend, gofakes3.WithAutoBucket(false))
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatalf("s3server: listen: %v", err)
	}
	// The harness reads this line to learn the port.
	fmt.Printf("listening on http://%s\n", ln.Addr().String())
	log.Fatal(http.Serve(ln, requireKey(*accessKey, faker.Server())))
}

// requireKey answers 403 InvalidAccessKeyId unless the SigV4 credential names the expected key.
func requireKey(key string, next http.Handler) http.Handler {
	want := "Credential=" + key + "/"
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		cred := r.URL.Query().Get("X-Amz-Credential")
		if !strings.Contains(auth, want) && !strings.HasPrefix(cred, key+"/") {
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>InvalidAccessKeyId</Code><Message>unknown access key</Message></Error>`)
			return
		}
		next.ServeHTTP(w, r)
	})
}
