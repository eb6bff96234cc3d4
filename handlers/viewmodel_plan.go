package handlers

import (
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/views"
)

// Flink's answers and a rewrite's splits as the pages show them.

func jarsView(js []flink.Jar) []views.Jar {
	out := make([]views.Jar, len(js))
	for i, j := range js {
		out[i] = views.Jar{ID: j.ID, Name: j.Name, Uploaded: j.Uploaded}
		for _, e := range j.Entry {
			out[i].Entries = append(out[i].Entries, e.Name)
		}
	}
	return out
}

func targetJobsView(ts []flink.TargetJobs) []views.TargetJobs {
	out := make([]views.TargetJobs, len(ts))
	for i, t := range ts {
		out[i] = views.TargetJobs{Target: t.Target, Region: string(t.Region), Err: t.Err}
		for _, j := range t.Jobs {
			out[i].Jobs = append(out[i].Jobs, views.FlinkJob{ID: j.ID, Name: j.Name, State: string(j.State), Running: j.State == flink.JobRunning})
		}
	}
	return out
}

func targetRowView(r model.RewriteSplit) views.TargetRow {
	return views.TargetRow{Key: r.Key, DRKey: mm2.TPKey(r.DR), Subtask: r.Subtask, Offset: r.Offset, Marker: r.Marker,
		Translation: r.Translation}
}
