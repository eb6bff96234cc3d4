package flink

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"strings"

	"github.com/drconsole/drconsole/config"
)

// ErrNotLocal is wrapped by LocalPath for paths on remote storage.
var ErrNotLocal = errors.New("not on a local file system")

// LocalPath maps a catalog path to a local one: file: URIs (file:/x,
// file:///x, file://localhost/x) and absolute paths. Remote schemes
// (s3://, hdfs://, gs://...) and relative paths are errors.
func LocalPath(p string) (string, error) {
	if filepath.IsAbs(p) {
		return filepath.Clean(p), nil
	}
	i := strings.Index(p, ":")
	if i <= 0 || strings.ContainsAny(p[:i], `/\`) {
		return "", fmt.Errorf("%q is not an absolute path or a file: URI", p)
	}
	scheme := strings.ToLower(p[:i])
	if scheme != "file" {
		return "", fmt.Errorf("%q is on %s://, %w: this console reads local paths (file: or absolute) and, with s3 configured, s3:// paths; mount it or copy it into a savepoint directory", p, scheme, ErrNotLocal)
	}
	u, err := url.Parse(p)
	if err != nil {
		return "", fmt.Errorf("bad file URI %q: %v", p, err)
	}
	if u.Host != "" && u.Host != "localhost" {
		return "", fmt.Errorf("file URI %q names host %q, %w", p, u.Host, ErrNotLocal)
	}
	if u.Path == "" || !strings.HasPrefix(u.Path, "/") {
		return "", fmt.Errorf("file URI %q has no absolute path", p)
	}
	return filepath.Clean(filepath.FromSlash(u.Path)), nil
}

// CanonicalPath is the catalog key of a savepoint path: local ones as
// Flink reports them, "file:" + the clean absolute directory (a trailing
// /_metadata dropped); others as given, without a trailing slash.
func CanonicalPath(p string) string {
	p = strings.TrimSpace(p)
	if local, err := LocalPath(p); err == nil {
		if filepath.Base(local) == MetadataFileName {
			local = filepath.Dir(local)
		}
		return "file:" + filepath.ToSlash(local)
	}
	if strings.HasSuffix(p, "/"+MetadataFileName) {
		p = strings.TrimSuffix(p, "/"+MetadataFileName)
	}
	if strings.HasSuffix(p, "/") && !strings.HasSuffix(p, "://") {
		p = strings.TrimRight(p, "/")
	}
	return p
}

// CleanS3 returns an S3 URI with its scheme as given, its key path cleaned
// ("." and ".." resolved, no trailing slash); false when it is not one.
func CleanS3(uri string) (string, bool) {
	i := strings.Index(uri, "://")
	if i <= 0 || !config.IsS3URI(uri) {
		return "", false
	}
	rest := uri[i+3:]
	bucket, key, _ := strings.Cut(rest, "/")
	if bucket == "" || strings.ContainsAny(uri, "?#\x00") {
		return "", false
	}
	key = strings.TrimPrefix(path.Clean("/"+key), "/")
	out := uri[:i+3] + bucket
	if key != "" {
		out += "/" + key
	}
	return out, true
}

// UnderSavepointDir reports whether p (a local path, file: URI or S3 URI)
// lies inside one of dirs, compared after cleaning ("." and ".."
// resolved), links not followed: Register checks the real locations too.
func UnderSavepointDir(dirs []string, p string) bool {
	p = strings.TrimSpace(p)
	if config.IsS3URI(p) {
		dir, ok := CleanS3(p)
		for _, d := range dirs {
			if root, rok := CleanS3(d); ok && rok && (strings.HasPrefix(dir, root+"/") || dir == root) {
				return true
			}
		}
		return false
	}
	local, err := LocalPath(p)
	if err != nil {
		return false
	}
	for _, d := range dirs {
		if ld, err := LocalPath(d); err == nil && Within(ld, local) {
			return true
		}
	}
	return false
}
