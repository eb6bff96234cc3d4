// Package s3test serves an in-memory S3 for tests: gofakes3, an
// independent implementation of the S3 REST API, so the console's S3
// reading is not tested against its own idea of S3.
package s3test

import (
	"bytes"
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/drconsole/drconsole/config"
)

// Server is an in-memory S3 with one bucket, named by Bucket.
type Server struct {
	// Config points the console at this server (path-style, us-east-1).
	Config *config.S3
	Bucket string
	cl     *minio.Client
}

// Start serves a new empty S3 until the test ends, with the bucket made,
// and sets AWS credentials in the environment (the server accepts any).
func Start(t testing.TB, bucket string) *Server {
	t.Helper()
	ts := httptest.NewServer(gofakes3.New(s3mem.New()).Server())
	t.Cleanup(ts.Close)
	t.Setenv("AWS_ACCESS_KEY_ID", "drconsole")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "drconsole-secret")
	cl, err := minio.New(strings.TrimPrefix(ts.URL, "http://"), &minio.Options{
		Creds: credentials.NewStaticV4("drconsole", "drconsole-secret", ""), BucketLookup: minio.BucketLookupPath, Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.MakeBucket(context.Background(), bucket, minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	return &Server{Config: &config.S3{Endpoint: ts.URL, Region: "us-east-1", PathStyle: true}, Bucket: bucket, cl: cl}
}

// PutIn stores b under key in bucket, made when missing.
func (s *Server) PutIn(t testing.TB, bucket, key string, b []byte) {
	t.Helper()
	if ok, err := s.cl.BucketExists(context.Background(), bucket); err != nil || !ok {
		if err := s.cl.MakeBucket(context.Background(), bucket, minio.MakeBucketOptions{}); err != nil {
			t.Fatalf("s3test: make bucket %s: %v", bucket, err)
		}
	}
	if _, err := s.cl.PutObject(context.Background(), bucket, key, bytes.NewReader(b), int64(len(b)), minio.PutObjectOptions{}); err != nil {
		t.Fatalf("s3test: put %s/%s: %v", bucket, key, err)
	}
}

// Put stores b under key in the bucket.
func (s *Server) Put(t testing.TB, key string, b []byte) {
	t.Helper()
	s.PutIn(t, s.Bucket, key, b)
}
