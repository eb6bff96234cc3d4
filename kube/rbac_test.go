package kube

import (
	"bytes"
	"errors"
	"io"
	"os"
	"slices"
	"testing"

	"go.yaml.in/yaml/v3"
)

type rbacDoc struct {
	Kind     string
	Metadata struct{ Name, Namespace string }
	Rules    []struct {
		APIGroups []string `yaml:"apiGroups"`
		Resources []string
		Verbs     []string
	}
	RoleRef  struct{ Kind, Name string } `yaml:"roleRef"`
	Subjects []struct{ Kind, Name, Namespace string }
}

// deploy/rbac.yaml grants exactly kube.Used: every access the code makes
// (the stand-in API server's tests check the code asks for nothing else),
// and nothing more; its binding gives the Role to the ServiceAccount.
func TestRBACGrantsExactlyWhatIsUsed(t *testing.T) {
	b, err := os.ReadFile("../deploy/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var docs []rbacDoc
	dec := yaml.NewDecoder(bytes.NewReader(b))
	for {
		var d rbacDoc
		if err := dec.Decode(&d); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, d)
	}
	granted := map[Access]bool{}
	var role, sa string
	var binding *rbacDoc
	for i, d := range docs {
		switch d.Kind {
		case "ServiceAccount":
			sa = d.Metadata.Namespace + "/" + d.Metadata.Name
		case "Role":
			role = d.Metadata.Namespace + "/" + d.Metadata.Name
			for _, r := range d.Rules {
				if !slices.Equal(r.APIGroups, []string{Group}) {
					t.Errorf("rule for API groups %v: only %s is needed", r.APIGroups, Group)
				}
				for _, res := range r.Resources {
					for _, v := range r.Verbs {
						granted[Access{v, res}] = true
					}
				}
			}
		case "RoleBinding":
			binding = &docs[i]
		default:
			t.Errorf("unexpected %s", d.Kind)
		}
	}
	for _, a := range Used {
		if !granted[a] {
			t.Errorf("the code uses %s; deploy/rbac.yaml does not grant it", a)
		}
		delete(granted, a)
	}
	for a := range granted {
		t.Errorf("deploy/rbac.yaml grants %s, which the code never uses", a)
	}
	if binding == nil || binding.RoleRef.Kind != "Role" || binding.Metadata.Namespace+"/"+binding.RoleRef.Name != role ||
		len(binding.Subjects) != 1 || binding.Subjects[0].Kind != "ServiceAccount" || binding.Subjects[0].Namespace+"/"+binding.Subjects[0].Name != sa {
		t.Errorf("the RoleBinding %+v does not give Role %s to ServiceAccount %s", binding, role, sa)
	}
}
