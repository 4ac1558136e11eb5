package hydrate

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"
)

// The schemas of every built-in kind of one Kubernetes release, made from
// the OpenAPI v3 documents the k8s.io/kubernetes module ships
// (k8sschema/gen.go says how): 860 schemas, 377 kB of JSON, 25 kB
// compressed. Validation reads nothing else, so it works offline.
//
//go:embed k8sschema/schemas.json.gz
var schemasGz []byte

// Invalid is an object of the hydrated output that its Kubernetes schema
// refuses.
type Invalid struct {
	File       string // the output file, relative to dest.path
	APIVersion string
	Kind       string
	Name       string
	// Problems are the schema's messages, each at its place in the object
	// ("/spec/replicas: got string, want integer").
	Problems []string
}

// Unvalidated is an object of a kind the schemas do not know (a custom
// resource): it is listed, never refused.
type Unvalidated struct {
	File, APIVersion, Kind, Name string
}

// Validation is what validating a hydrated output found.
type Validation struct {
	Kubernetes  string // the release whose schemas judged it, e.g. v1.37.2
	Checked     int    // objects validated against a schema
	Invalid     []Invalid
	Unvalidated []Unvalidated
}

// maxProblemsPerObject bounds what one object reports: the first few
// problems say what to fix, a hundred would only fill the check.
const maxProblemsPerObject = 5

// Validate checks each object of a hydrated output (one per file, as
// Hydrate writes them; SyncStateFile is Strata's own) against the schema of
// its apiVersion and kind. A field the schema does not list, a value of the
// wrong type, a missing required field are problems; null is accepted
// anywhere, as the API server accepts it. Files are visited in name order.
func Validate(files map[string][]byte) (*Validation, error) {
	s, err := loadSchemas()
	if err != nil {
		return nil, err
	}
	v := &Validation{Kubernetes: s.kubernetes}
	names := make([]string, 0, len(files))
	for name := range files {
		if name != SyncStateFile {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		var obj map[string]any
		if err := yaml.Unmarshal(files[name], &obj); err != nil {
			v.Invalid = append(v.Invalid, Invalid{File: name, Problems: []string{"not a YAML object: " + err.Error()}})
			continue
		}
		apiVersion, _ := obj["apiVersion"].(string)
		kind, _ := obj["kind"].(string)
		meta, _ := obj["metadata"].(map[string]any)
		objName, _ := meta["name"].(string)
		sch, known, err := s.schema(apiVersion, kind)
		if err != nil {
			return nil, err
		}
		if !known {
			v.Unvalidated = append(v.Unvalidated, Unvalidated{File: name, APIVersion: apiVersion, Kind: kind, Name: objName})
			continue
		}
		v.Checked++
		// Validate reads JSON's types: YAML's are decoded as JSON would.
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(mustJSON(obj)))
		if err != nil {
			return nil, err
		}
		var ve *jsonschema.ValidationError
		if err := sch.Validate(inst); errors.As(err, &ve) {
			v.Invalid = append(v.Invalid, Invalid{File: name, APIVersion: apiVersion, Kind: kind, Name: objName, Problems: problems(ve)})
		} else if err != nil {
			return nil, err
		}
	}
	return v, nil
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v) // what yaml.Unmarshal made always marshals
	return b
}

// problems are the leaves of a validation error: where, and what is wrong.
func problems(ve *jsonschema.ValidationError) []string {
	var out []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			// Every type also allows null (see gen.go), which says nothing
			// to whoever wrote a string for a number.
			msg := strings.NewReplacer(" or null", "", "null or ", "", ", null", "", "'", "").Replace(e.Error())
			msg = strings.TrimPrefix(msg, "at ")
			if strings.HasPrefix(msg, ": ") {
				msg = "/" + msg // the object itself
			}
			out = append(out, msg)
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.Strings(out)
	if len(out) > maxProblemsPerObject {
		out = append(out[:maxProblemsPerObject], fmt.Sprintf("… and %d more", len(out)-maxProblemsPerObject))
	}
	return out
}

// schemas compiles each kind's schema the first time an object of that kind
// is validated; the compiler shares what kinds have in common (ObjectMeta,
// PodSpec) between them.
type schemas struct {
	kubernetes string
	kinds      map[string]string // "apps/v1 Deployment" -> schema name

	mu       sync.Mutex
	compiler *jsonschema.Compiler
	compiled map[string]*jsonschema.Schema
}

const schemasURL = "strata:///kubernetes.json"

// loadSchemas decompresses the embedded schemas once per process: they are
// the same for every validation, and read-only once loaded.
var loadSchemas = sync.OnceValues(func() (*schemas, error) {
	zr, err := gzip.NewReader(bytes.NewReader(schemasGz))
	if err != nil {
		return nil, fmt.Errorf("read the embedded Kubernetes schemas: %w", err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("read the embedded Kubernetes schemas: %w", err)
	}
	var head struct {
		Kubernetes string            `json:"kubernetes"`
		Kinds      map[string]string `json:"kinds"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("read the embedded Kubernetes schemas: %w", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(nothingLoader{})
	if err := c.AddResource(schemasURL, doc); err != nil {
		return nil, err
	}
	return &schemas{kubernetes: head.Kubernetes, kinds: head.Kinds, compiler: c, compiled: map[string]*jsonschema.Schema{}}, nil
})

func (s *schemas) schema(apiVersion, kind string) (*jsonschema.Schema, bool, error) {
	name, ok := s.kinds[apiVersion+" "+kind]
	if !ok {
		return nil, false, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if sch := s.compiled[name]; sch != nil {
		return sch, true, nil
	}
	sch, err := s.compiler.Compile(schemasURL + "#/components/schemas/" + name)
	if err != nil {
		return nil, false, fmt.Errorf("compile the schema of %s %s: %w", apiVersion, kind, err)
	}
	s.compiled[name] = sch
	return sch, true, nil
}

// nothingLoader loads nothing: every reference is inside the embedded
// document, and validation never reaches the network or the disk.
type nothingLoader struct{}

func (nothingLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("the Kubernetes schemas refer to %s, which is not embedded", url)
}
