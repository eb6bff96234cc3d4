package openapi

import (
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/drconsole/drconsole/clusterlink"
	"github.com/getkin/kin-openapi/openapi3"
)

// Every field the console's client decodes is one the document declares,
// of a type that decodes what the document allows: a field it depends on
// that Confluent never sends would read as zero, silently.
func TestClientFieldsAreDeclared(t *testing.T) {
	spec, err := LoadSpec()
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]any{
		"ListLinksResponseDataList":         clusterlink.List[clusterlink.LinkInfo]{},
		"ListLinksResponseData":             clusterlink.LinkInfo{},
		"ListMirrorTopicsResponseDataList":  clusterlink.List[clusterlink.MirrorTopic]{},
		"ListMirrorTopicsResponseData":      clusterlink.MirrorTopic{},
		"AlterMirrorStatusResponseDataList": clusterlink.List[clusterlink.MirrorActionResult]{},
		"Error":                             errorBody{},
	} {
		ref := spec.Doc.Components.Schemas[name]
		if ref == nil {
			t.Fatalf("the document has no schema %s", name)
		}
		var problems []string
		fitsSchema(reflect.TypeOf(v), ref, name, &problems)
		for _, p := range problems {
			t.Errorf("%T: %s", v, p)
		}
	}
}

// errorBody is what clusterlink's error parsing reads of a non-2xx answer
// (error_code as a number, message).
type errorBody struct {
	ErrorCode int     `json:"error_code"`
	Message   *string `json:"message"`
}

// fitsSchema checks Go type typ against schema ref, field by field.
func fitsSchema(typ reflect.Type, ref *openapi3.SchemaRef, at string, problems *[]string) {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	s := ref.Value
	want := map[reflect.Kind]string{reflect.String: "string", reflect.Int: "integer", reflect.Int64: "integer", reflect.Int32: "integer",
		reflect.Bool: "boolean", reflect.Slice: "array", reflect.Struct: "object"}[typ.Kind()]
	if got := schemaType(s); want == "" || got != want {
		*problems = append(*problems, at+": Go "+typ.String()+", the document's type "+got)
		return
	}
	switch typ.Kind() {
	case reflect.Slice:
		fitsSchema(typ.Elem(), s.Items, at+"[]", problems)
	case reflect.Struct:
		props := properties(s)
		for i := range typ.NumField() {
			f := typ.Field(i)
			tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if tag == "" || tag == "-" {
				continue
			}
			p, ok := props[tag]
			if !ok {
				*problems = append(*problems, at+"."+tag+": not declared by the document")
				continue
			}
			fitsSchema(f.Type, p, at+"."+tag, problems)
		}
	}
}

// schemaType is the schema's type, through allOf.
func schemaType(s *openapi3.Schema) string {
	if s.Type != nil && len(*s.Type) > 0 {
		return (*s.Type)[0]
	}
	for _, a := range s.AllOf {
		if t := schemaType(a.Value); t != "" {
			return t
		}
	}
	return ""
}

// The mirror states the console names are exactly the document's
// MirrorTopicStatus values.
func TestMirrorStatesAreTheDocuments(t *testing.T) {
	spec, err := LoadSpec()
	if err != nil {
		t.Fatal(err)
	}
	var doc []string
	for _, v := range spec.Doc.Components.Schemas["MirrorTopicStatus"].Value.Enum {
		doc = append(doc, v.(string))
	}
	var ours []string
	for _, m := range []clusterlink.MirrorState{clusterlink.MirrorActive, clusterlink.MirrorPaused, clusterlink.MirrorPendingStopped,
		clusterlink.MirrorStopped, clusterlink.MirrorFailed, clusterlink.MirrorLinkFailed, clusterlink.MirrorLinkPaused,
		clusterlink.MirrorSourceUnavailable, clusterlink.MirrorPendingMirror, clusterlink.MirrorPendingSync,
		clusterlink.MirrorPendingSetup, clusterlink.MirrorPendingRestore} {
		ours = append(ours, string(m))
	}
	sort.Strings(doc)
	sort.Strings(ours)
	if !slices.Equal(doc, ours) {
		t.Fatalf("the document's mirror states %v, the console's %v", doc, ours)
	}
}
