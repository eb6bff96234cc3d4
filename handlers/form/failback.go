package form

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/drconsole/drconsole/model"
)

// LostExport is POST /flows/{flow}/lost/export: which records lost to DR to
// export; topic and partition, both or neither, narrow it to one partition.
type LostExport struct {
	Only *model.TP
	errs Errors
}

// ReadLostExport reads the export's form.
func ReadLostExport(r *http.Request) LostExport {
	var f LostExport
	topic, part := strings.TrimSpace(r.PostFormValue("topic")), strings.TrimSpace(r.PostFormValue("partition"))
	if topic == "" && part == "" {
		return f
	}
	p, err := strconv.ParseInt(part, 10, 32)
	switch {
	case topic == "":
		f.errs = Errors{"topic": "name the topic of the partition"}
	case err != nil || p < 0:
		f.errs = Errors{"partition": "a partition number (0 or more)"}
	default:
		f.Only = &model.TP{Topic: topic, Partition: int32(p)}
	}
	return f
}

// Validate reports what could not be read.
func (f LostExport) Validate() error {
	if len(f.errs) > 0 {
		return f.errs
	}
	return nil
}
