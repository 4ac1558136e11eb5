package config

import (
	"os"
	"path/filepath"
	"testing"
)

func TestNearest(t *testing.T) {
	known := []string{"addr", "workers", "data_dir", "database_url", "github", "apply_permission", "plan_permission"}
	for _, tc := range []struct {
		word, want string
	}{
		{"workes", "workers"},    // a letter missing
		{"wokrers", "workers"},   // two neighbours swapped
		{"Workers", "workers"},   // case
		{"data-dir", "data_dir"}, // a dash for an underscore
		{"apply_permisson", "apply_permission"},
		{"plan_permision", "plan_permission"},
		{"x", ""},       // nothing is that close
		{"listen", ""},  // a different word, not a typo
		{"workers", ""}, // known already: no hint
		{"", ""},
	} {
		if got := Nearest(tc.word, known); got != tc.want {
			t.Errorf("Nearest(%q) = %q, want %q", tc.word, got, tc.want)
		}
	}
}

// A typo in the server config names the file, the line and the key meant,
// in nested sections and in inlined ones too.
func TestServerConfigSuggestsTheKeyMeant(t *testing.T) {
	file := filepath.Join(t.TempDir(), "strata.yaml")
	data := "addr: \":9000\"\nworkes: 8\ngithub:\n  app_idd: 12\nretenton: 24h\n"
	if err := os.WriteFile(file, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadServer(file, envOf(nil))
	want := file + `:2: unknown key "workes" (did you mean "workers"?)` + "\n" +
		file + `:4: unknown key "app_idd" (did you mean "app_id"?)` + "\n" +
		file + `:5: unknown key "retenton" (did you mean "retention"?)`
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant:\n%s", err, want)
	}
}
