package effect

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/flink/s3"
	"github.com/drconsole/drconsole/kafka"
)

// DrillGroupPrefix starts the name of every temporary consumer group a DR
// drill commits to. The drill effects below refuse any other name, so no
// code path, however confused, deletes a production group.
const DrillGroupPrefix = "drconsole-drill-"

// ErrNotDrillGroup refuses a drill effect on a group outside the drill's
// name space.
var ErrNotDrillGroup = errors.New("not a drill's temporary group (" + DrillGroupPrefix + "…): a drill never touches another group")

// CancelJob cancels the Flink job jobID (PATCH /jobs/{id}?mode=cancel).
// A job the cluster does not know, or one already finished, is not an
// error: there is nothing left to cancel. It returns the state it found.
func CancelJob(ctx context.Context, w audit.Written, c *flink.RESTClient, jobID string) (string, error) {
	if err := audited(w, "flink: cancel job "+jobID); err != nil {
		return "", err
	}
	j, err := c.Job(ctx, jobID)
	if re := (*flink.RESTError)(nil); errors.As(err, &re) && re.Status == http.StatusNotFound {
		return "not found", nil
	}
	if err != nil {
		return "", err
	}
	if j.State.Final() {
		return string(j.State), nil
	}
	path := "/jobs/" + url.PathEscape(jobID) + "?mode=cancel"
	req, err := http.NewRequestWithContext(ctx, http.MethodPatch, c.Base+path, nil)
	if err != nil {
		return string(j.State), err
	}
	resp, err := c.HTTP.Do(req)
	return string(j.State), flink.Answer(http.MethodPatch, path, resp, err, nil)
}

// DeleteDrillGroup deletes a drill's temporary consumer group in DR. It
// refuses a name without DrillGroupPrefix, and a group with members (the
// drill job must be cancelled first); a group that does not exist (state
// Dead) is not an error, and is asked to be deleted all the same (a group
// holding only committed offsets may describe as Dead on some brokers). It reports whether a group was deleted.
func DeleteDrillGroup(ctx context.Context, w audit.Written, target *kgo.Client, group string) (bool, error) {
	if err := audited(w, "delete group "+group); err != nil {
		return false, err
	}
	if !strings.HasPrefix(group, DrillGroupPrefix) {
		return false, fmt.Errorf("group %q: %w", group, ErrNotDrillGroup)
	}
	adm := kadm.NewClient(target)
	state, members, err := kafka.GroupState(ctx, adm, group)
	if err != nil {
		return false, err
	}
	if members > 0 {
		return false, fmt.Errorf("%w (group %s is %s with %d member(s))", kafka.ErrGroupActive, group, state, members)
	}
	var deleted bool
	err = kafka.CoordinatorRetry(ctx, func() error {
		_, err := adm.DeleteGroup(ctx, group) // the group's error code, as an error
		if errors.Is(err, kerr.GroupIDNotFound) {
			return nil // never existed, or an earlier attempt deleted it
		}
		deleted = err == nil
		return err
	})
	if err != nil {
		return false, fmt.Errorf("deleting group %s: %w", group, err)
	}
	return deleted, nil
}

// RemoveSavepointCopy deletes the local directory dir, a rewritten
// savepoint a drill restored its job copy from (the job is cancelled
// first). Only a plain directory holding a `_metadata` is removed: a
// symbolic link, a file or a directory that is not a savepoint is refused.
// A directory already gone is no error.
func RemoveSavepointCopy(ctx context.Context, w audit.Written, dir string) error {
	if err := audited(w, "remove rewritten savepoint "+dir); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory (%s): not removed", dir, fi.Mode().Type())
	}
	if _, err := os.Stat(filepath.Join(dir, flink.MetadataFileName)); err != nil {
		return fmt.Errorf("%s holds no savepoint `_metadata` (%v): not removed", dir, err)
	}
	return os.RemoveAll(dir)
}

// RemoveRemoteSavepointCopy deletes a rewritten savepoint copy on S3
// (dir, an s3:// URI), like RemoveSavepointCopy: every object at or below
// dir, `_metadata` last, so a removal cut short still reads as a savepoint
// and the next cleanup finishes it. A dir with no object left is removed
// already; one with objects but no `_metadata` is not a savepoint and is
// left alone.
func RemoveRemoteSavepointCopy(ctx context.Context, w audit.Written, store *s3.Store, dir string) error {
	if err := audited(w, "remove rewritten savepoint "+dir); err != nil {
		return err
	}
	dir = strings.TrimSuffix(dir, "/")
	meta := dir + "/" + flink.MetadataFileName
	switch ok, err := store.Exists(ctx, meta); {
	case err != nil:
		return err
	case !ok:
		if empty, err := store.Empty(ctx, dir); err != nil || empty {
			return err
		}
		return fmt.Errorf("%s holds no savepoint `_metadata`: not removed", dir)
	}
	var objects []string
	for pending := []string{dir}; len(pending) > 0; {
		d := pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		files, subdirs, err := store.List(ctx, d)
		if err != nil {
			return err
		}
		for _, f := range files {
			if f.URI != meta {
				objects = append(objects, f.URI)
			}
		}
		pending = append(pending, subdirs...)
	}
	for _, o := range append(objects, meta) {
		if err := store.Remove(ctx, o); err != nil {
			return fmt.Errorf("removing %s: %w", o, err)
		}
	}
	return nil
}
