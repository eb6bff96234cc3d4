package cli

import (
	"testing"
	"testing/fstest"
)

// The container's limit is read from cgroup v2, else v1; "max", v1's
// "unlimited" and garbage are no limit, never a tiny or negative one.
func TestContainerMemoryLimit(t *testing.T) {
	for _, c := range []struct {
		name  string
		files fstest.MapFS
		want  int64
	}{
		{"v2", fstest.MapFS{"memory.max": {Data: []byte("536870912\n")}}, 536870912},
		{"v2 unlimited", fstest.MapFS{"memory.max": {Data: []byte("max\n")}}, 0},
		{"v1", fstest.MapFS{"memory/memory.limit_in_bytes": {Data: []byte("268435456\n")}}, 268435456},
		{"v1 unlimited", fstest.MapFS{"memory/memory.limit_in_bytes": {Data: []byte("9223372036854771712\n")}}, 0},
		{"garbage", fstest.MapFS{"memory.max": {Data: []byte("lots")}}, 0},
		{"none", fstest.MapFS{}, 0},
	} {
		if got := containerMemoryLimit(c.files); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}
