package web

import (
	"strings"
	"testing"

	"strata.dev/strata/version"
)

// Every page's footer says which Strata serves it, as /readyz and
// strata version do.
func TestFooterNamesTheVersion(t *testing.T) {
	pages, err := parsePages()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := pages["error"].Execute(&b, Page{Title: "Not Found", Data: "Nothing here."}); err != nil {
		t.Fatal(err)
	}
	if want := `<footer class="foot">Strata ` + version.String() + `</footer>`; !strings.Contains(b.String(), want) {
		t.Errorf("the page lacks %q:\n%s", want, b.String())
	}
}
