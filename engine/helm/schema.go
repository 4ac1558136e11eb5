package helm

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"helm.sh/helm/v3/pkg/chart"
)

// ErrSchemaRef is a values.schema.json that refers to a document outside
// itself. Helm's validator (chartutil.ValidateAgainstSchema, run by every
// install and upgrade) loads file:// and http(s):// references: a PR's
// chart could have the server read its own files (/dev/zero, the App's
// key; a JSON file's values would show in the validation errors) or fetch
// URLs of its network (GHSA-9h84-qmv7-982p).
var ErrSchemaRef = errors.New("refers to a document outside the chart")

// checkSchemas compiles the values.schema.json of the chart and of each of
// its dependencies, as Helm will, with a loader that loads nothing, and
// refuses a schema for which the compiler asked for anything: then Helm's
// own compile of the same document asks for nothing either.
func checkSchemas(ch *chart.Chart) error {
	if len(ch.Schema) > 0 {
		if err := checkSchema(ch.Schema); err != nil {
			return fmt.Errorf("%s/values.schema.json: %w", ch.ChartFullPath(), err)
		}
	}
	for _, dep := range ch.Dependencies() {
		if err := checkSchemas(dep); err != nil {
			return err
		}
	}
	return nil
}

func checkSchema(data []byte) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	l := &noLoader{}
	c := jsonschema.NewCompiler()
	c.UseLoader(l)
	// The location Helm gives it, so that relative references resolve alike.
	const loc = "file:///values.schema.json"
	if err := c.AddResource(loc, doc); err != nil {
		return err
	}
	_, err = c.Compile(loc)
	if len(l.asked) > 0 {
		return fmt.Errorf("%w: %s: Strata loads no file or URL a schema names; put what it refers to in the schema's $defs",
			ErrSchemaRef, strings.Join(l.asked, ", "))
	}
	return err
}

// noLoader records what the compiler asks for and gives nothing, except a
// urn:, which Helm answers with the schema true without loading anything.
type noLoader struct{ asked []string }

func (l *noLoader) Load(url string) (any, error) {
	if strings.HasPrefix(url, "urn:") {
		return true, nil
	}
	l.asked = append(l.asked, url)
	return nil, ErrSchemaRef
}
