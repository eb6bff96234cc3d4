// Package s3 reads Flink savepoints and checkpoints kept on S3-compatible
// object storage (AWS S3, MinIO, Ceph...), for the savepoint catalog: the
// objects of one savepoint and the listing of a savepoint directory. It
// writes only new objects of a rewritten savepoint (flink.Rewrite, through
// flink.WritableFiles), and removes only those when a rewrite fails.
package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/drconsole/drconsole/config"
)

// Timeout bounds one read of an object, or one directory's whole listing.
const Timeout = time.Minute

// Store reads objects by URI: s3://bucket/key (s3a:// and s3p://, the
// names of Flink's Hadoop and Presto S3 plugins, mean the same).
type Store struct {
	cl *minio.Client
}

// New connects to the configured endpoint; credentials come from the
// environment (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, then MinIO's
// MINIO_ROOT_USER / MINIO_ROOT_PASSWORD), ~/.aws/credentials, then an IAM
// role (web identity on EKS, ECS, EC2). No credentials at all means
// anonymous requests.
func New(c *config.S3) (*Store, error) {
	u, err := url.Parse(c.Endpoint)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("s3: endpoint %q is not an http(s) URL", c.Endpoint)
	}
	lookup := minio.BucketLookupAuto
	if c.PathStyle {
		lookup = minio.BucketLookupPath
	}
	creds := credentials.NewChainCredentials([]credentials.Provider{
		&credentials.EnvAWS{},
		&credentials.EnvMinio{},
		&credentials.FileAWSCredentials{},
		&credentials.IAM{Client: &http.Client{Timeout: 10 * time.Second}},
	})
	cl, err := minio.New(u.Host, &minio.Options{Creds: creds, Secure: u.Scheme == "https", Region: c.Region, BucketLookup: lookup})
	if err != nil {
		return nil, fmt.Errorf("s3: %w", err)
	}
	return &Store{cl: cl}, nil
}

// Serves reports whether uri is an s3://, s3a:// or s3p:// URI.
func (s *Store) Serves(uri string) bool { return config.IsS3URI(uri) }

// split parses an S3 URI into its bucket and key. The key is taken as
// written, never percent-decoded: S3 keys are literal, and the callers'
// containment checks (no ".." out of a directory) look at the same string
// that is read.
func split(uri string) (bucket, key string, err error) {
	if !config.IsS3URI(uri) {
		return "", "", fmt.Errorf("s3: %q is not an s3:// URI", uri)
	}
	rest := uri[strings.Index(uri, "://")+3:]
	bucket, key, _ = strings.Cut(rest, "/")
	if bucket == "" {
		return "", "", fmt.Errorf("s3: URI %q names no bucket", uri)
	}
	return bucket, key, nil
}

// ReadFile returns the object at uri; more than limit bytes is an error
// (checked before the body is fetched), a missing object wraps
// fs.ErrNotExist.
func (s *Store) ReadFile(uri string, limit int64) ([]byte, error) {
	bucket, key, err := split(uri)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	obj, err := s.cl.GetObject(ctx, bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, s.wrap(uri, err)
	}
	defer obj.Close()
	info, err := obj.Stat()
	if err != nil {
		return nil, s.wrap(uri, err)
	}
	if info.Size > limit {
		return nil, fmt.Errorf("s3: %s is %d bytes, more than this reader loads (%d)", uri, info.Size, limit)
	}
	b, err := io.ReadAll(io.LimitReader(obj, limit+1))
	if err != nil {
		return nil, s.wrap(uri, err)
	}
	if int64(len(b)) != info.Size {
		return nil, fmt.Errorf("s3: %s: read %d bytes of %d", uri, len(b), info.Size)
	}
	return b, nil
}

// Object is one object found by List.
type Object struct {
	URI     string
	Size    int64
	ModTime time.Time
}

// List returns the objects directly in the "directory" dir (a URI; a
// trailing slash is implied) and the URIs of its subdirectories, each in
// the scheme dir was given in.
func (s *Store) List(ctx context.Context, dir string) (files []Object, subdirs []string, err error) {
	bucket, key, err := split(dir)
	if err != nil {
		return nil, nil, err
	}
	prefix := strings.TrimSuffix(key, "/")
	if prefix != "" {
		prefix += "/"
	}
	base := dir[:strings.Index(dir, "://")+3] + bucket + "/"
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	for o := range s.cl.ListObjects(ctx, bucket, minio.ListObjectsOptions{Prefix: prefix}) {
		if o.Err != nil {
			return nil, nil, s.wrap(dir, o.Err)
		}
		if strings.HasSuffix(o.Key, "/") {
			if o.Key != prefix {
				subdirs = append(subdirs, base+strings.TrimSuffix(o.Key, "/"))
			}
			continue
		}
		files = append(files, Object{URI: base + o.Key, Size: o.Size, ModTime: o.LastModified})
	}
	return files, subdirs, nil
}

// Exists reports whether the object at uri exists.
func (s *Store) Exists(ctx context.Context, uri string) (bool, error) {
	bucket, key, err := split(uri)
	if err != nil {
		return false, err
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	if _, err := s.cl.StatObject(ctx, bucket, key, minio.StatObjectOptions{}); err != nil {
		if err = s.wrap(uri, err); errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// wrap turns the service's "no such key / bucket" into fs.ErrNotExist and
// names the URI.
func (s *Store) wrap(uri string, err error) error {
	switch minio.ToErrorResponse(err).Code {
	case minio.NoSuchKey, minio.NoSuchBucket:
		return fmt.Errorf("s3: %s: %w", uri, fs.ErrNotExist)
	}
	return fmt.Errorf("s3: %s: %w", uri, err)
}

// WriteFile stores data as the object at uri (flink.WritableFiles).
func (s *Store) WriteFile(ctx context.Context, uri string, data []byte) error {
	bucket, key, err := split(uri)
	if err != nil {
		return err
	}
	if key == "" || strings.HasSuffix(key, "/") {
		return fmt.Errorf("s3: %q names no object", uri)
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	if _, err := s.cl.PutObject(ctx, bucket, key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
		return s.wrap(uri, err)
	}
	return nil
}

// Remove deletes the object at uri; a missing object is no error.
func (s *Store) Remove(ctx context.Context, uri string) error {
	bucket, key, err := split(uri)
	if err != nil {
		return err
	}
	if key == "" {
		return fmt.Errorf("s3: %q names no object", uri)
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	if err := s.cl.RemoveObject(ctx, bucket, key, minio.RemoveObjectOptions{}); err != nil {
		if err = s.wrap(uri, err); errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	return nil
}

// Empty reports whether no object lies at dir or below it (a missing
// bucket counts as an error, not as empty).
func (s *Store) Empty(ctx context.Context, dir string) (bool, error) {
	bucket, key, err := split(dir)
	if err != nil {
		return false, err
	}
	key = strings.TrimSuffix(key, "/")
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	if _, err := s.cl.StatObject(ctx, bucket, key, minio.StatObjectOptions{}); err == nil {
		return false, nil
	} else if err = s.wrap(dir, err); !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	for o := range s.cl.ListObjects(ctx, bucket, minio.ListObjectsOptions{Prefix: key + "/", Recursive: true, MaxKeys: 1}) {
		if o.Err != nil {
			return false, s.wrap(dir, o.Err)
		}
		return false, nil
	}
	return true, nil
}
