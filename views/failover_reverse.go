package views

import (
	"maps"
	"slices"

	"github.com/drconsole/drconsole/model"
)

func countBehind(rows []model.ReverseRow) int {
	n := 0
	for _, r := range rows {
		if r.Behind > 0 {
			n++
		}
	}
	return n
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
