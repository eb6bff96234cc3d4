package handlers

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/drconsole/drconsole/views"
)

// A step's typed result (runbook/failover, runbook/failback: structs with
// json tags) as the run page shows it: labelled figures read from its
// JSON, so every kind's result reads without a view of its own.

// maxFigures bounds a result's figures; the raw JSON holds them all.
const maxFigures = 24

// resultFigures reads a step's JSON result as labelled figures, in the
// result's own order: nested objects' labels joined with " · ", lists
// counted (short lists of plain values spelled out), null as "unknown"
// (a figure the step could not establish). Strings are shown as recorded,
// so a "≥" or an "unknown" in them stays. Not JSON: no figures.
func resultFigures(raw string) []views.Figure {
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var out []views.Figure
	more := 0
	add := func(label, value string) {
		if len(out) < maxFigures {
			out = append(out, views.Figure{Label: label, Value: value})
		} else {
			more++
		}
	}
	if err := walkJSON(dec, "", add); err != nil {
		return nil
	}
	if more > 0 {
		out = append(out, views.Figure{Label: "more", Value: strconv.Itoa(more) + " more figure(s) in the raw result"})
	}
	return out
}

// walkJSON reads one JSON value from dec, calling add for each leaf.
func walkJSON(dec *json.Decoder, label string, add func(label, value string)) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				key, _ := k.(string)
				if key == "v" && label == "" {
					var skip any // the result's format version, not a figure
					if err := dec.Decode(&skip); err != nil {
						return err
					}
					continue
				}
				if err := walkJSON(dec, joinLabel(label, key), add); err != nil {
					return err
				}
			}
		} else {
			var items []any
			for dec.More() {
				var it any
				if err := dec.Decode(&it); err != nil {
					return err
				}
				items = append(items, it)
			}
			add(orLabel(label), listValue(items))
		}
		_, err = dec.Token() // the closing delimiter
		return err
	case nil:
		add(orLabel(label), "unknown")
	case bool:
		add(orLabel(label), map[bool]string{true: "yes", false: "no"}[t])
	default:
		add(orLabel(label), fmt.Sprint(t))
	}
	return nil
}

func joinLabel(parent, key string) string {
	key = strings.ReplaceAll(key, "_", " ")
	if parent == "" {
		return key
	}
	return parent + " · " + key
}

func orLabel(l string) string {
	if l == "" {
		return "result"
	}
	return l
}

// listValue counts a list, spelling out a short one of plain values.
func listValue(items []any) string {
	if len(items) == 0 {
		return "none"
	}
	var plain []string
	for _, it := range items {
		switch v := it.(type) {
		case map[string]any, []any:
			return strconv.Itoa(len(items)) + " item(s), in the raw result"
		case nil:
			plain = append(plain, "unknown")
		default:
			plain = append(plain, fmt.Sprint(v))
		}
	}
	if len(plain) > 8 {
		return strconv.Itoa(len(plain)) + " item(s): " + strings.Join(plain[:8], ", ") + ", …"
	}
	return strings.Join(plain, ", ")
}
