package command

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseCommands(t *testing.T) {
	tests := []struct {
		name string
		body string
		want Command
	}{
		{"plan all", "/plan", Plan{}},
		{"plan layers", "/plan network infra/dns", Plan{Layers: []string{"network", "infra/dns"}}},
		{"plan workspace layer", "/plan network@prod", Plan{Layers: []string{"network@prod"}}},
		{"plan repeats dropped", "/plan a b a", Plan{Layers: []string{"a", "b"}}},
		{"root dir layer", "/plan .", Plan{Layers: []string{"."}}},
		{"apply", "/apply network", Apply{Layers: []string{"network"}}},
		{"unlock", "/unlock", Unlock{}},
		{"cancel", "/cancel", Cancel{}},
		{"cancel, text on the next line", "/cancel\nwrong branch", Cancel{}},
		{"CRLF and leading blank lines", "\r\n  \r\n/apply  network \r\nthanks!", Apply{Layers: []string{"network"}}},
		{"text on the next line", "/plan\nplease look at the dns change", Plan{}},
		{"trailing spaces and tabs", "/plan\ta\t \n", Plan{Layers: []string{"a"}}},
		{"up to three spaces of indent", "   /unlock a", Unlock{Layers: []string{"a"}}},
		{"takeover default", "/takeover", Takeover{}},
		{"takeover sync", "/takeover dev", Takeover{Sync: "dev"}},
		{"takeover duration alone", "/takeover 2h", Takeover{Duration: 2 * time.Hour}},
		{"takeover sync and duration", "/takeover dev 1h30m", Takeover{Sync: "dev", Duration: 90 * time.Minute}},
		{"takeover days", "/takeover dev 1d", Takeover{Sync: "dev", Duration: 24 * time.Hour}},
		{"takeover days and hours", "/takeover 1d12h", Takeover{Duration: 36 * time.Hour}},
		{"takeover sync starting with a digit", "/takeover 2x", Takeover{Sync: "2x"}},
		{"release", "/release", Release{}},
		{"release sync", "/release dev", Release{Sync: "dev"}},
		{"helm-test all", "/helm-test", HelmTest{}},
		{"helm-test releases and filters", "/helm-test api web --filter smoke --filter=db",
			HelmTest{Releases: []string{"api", "web"}, Filters: []string{"smoke", "db"}}},
		{"helm-test filter first", "/helm-test --filter smoke api", HelmTest{Releases: []string{"api"}, Filters: []string{"smoke"}}},
		{"help", "/help", Help{}},
		{"help ignores words", "/help me please", Help{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.body)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.body, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Parse(%q) = %#v, want %#v", tt.body, got, tt.want)
			}
		})
	}
}

func TestParseNotACommand(t *testing.T) {
	bodies := []string{
		"",
		"  \n\r\n ",
		"LGTM",
		"Could you /plan this?",
		"> /apply\nquoted from above",
		"Let's do it:\n```\n/apply\n```",
		"    /apply (a code block)",
		"\t/apply",
		"/lgtm",
		"/assign @me",
		"/retest",
		"/Plan network",
		"/APPLY",
		"/plans",
		"/plan.",
		"/",
		"//plan",
	}
	for _, body := range bodies {
		got, err := Parse(body)
		if got != nil || err != nil {
			t.Errorf("Parse(%q) = %#v, %v; want nil, nil", body, got, err)
		}
	}
}

func TestParseUsageErrors(t *testing.T) {
	many := "/plan"
	for i := 0; i <= MaxNames; i++ {
		many += " l" + strings.Repeat("x", i%3) + string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	tests := []struct {
		name, body, wantMsg string
	}{
		{"unknown flag", "/plan --target=aws_instance.x", "Unknown flag"},
		{"short flag", "/apply -auto-approve", "Unknown flag"},
		{"shell metacharacters", "/plan a;rm", "may only use"},
		{"command substitution", "/apply $(id)", "may only use"},
		{"pipe", "/unlock a|b", "may only use"},
		{"backtick", "/plan `id`", "may only use"},
		{"path escape", "/plan ../../etc", "leaves the repository"},
		{"hidden path escape", "/plan a/../../b", "leaves the repository"},
		{"absolute path", "/plan /etc/passwd", "absolute path"},
		{"too long", "/plan " + strings.Repeat("a", MaxNameLen+1), "longer than"},
		{"too many", many, "Too many layers"},
		{"takeover bad duration", "/takeover dev soon", "not a duration"},
		{"takeover zero", "/takeover 0", "must be positive"},
		{"takeover negative", "/takeover dev -5m", "must be positive"},
		{"takeover three args", "/takeover dev 2h more", "Too many arguments"},
		{"takeover duration first", "/takeover 2h dev", "is a duration, not a sync name"},
		{"takeover bad sync", "/takeover de&v", "may only use"},
		{"cancel names a layer", "/cancel network", "takes no arguments"},
		{"release two syncs", "/release dev prod", "Too many arguments"},
		{"helm-test filter without value", "/helm-test api --filter", "needs a test name"},
		{"helm-test empty filter", "/helm-test --filter=", "needs a test name"},
		{"helm-test filter followed by flag", "/helm-test --filter --debug", "needs a test name"},
		{"helm-test unknown flag", "/helm-test --wait", "Unknown flag"},
		{"helm-test bad filter", "/helm-test --filter a>b", "may only use"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.body)
			var ue *UsageError
			if !errors.As(err, &ue) {
				t.Fatalf("Parse(%q) = %#v, %v; want a *UsageError", tt.body, got, err)
			}
			if !strings.Contains(ue.Msg, tt.wantMsg) {
				t.Errorf("message %q does not contain %q", ue.Msg, tt.wantMsg)
			}
			name := strings.TrimPrefix(strings.Fields(tt.body)[0], "/")
			if !strings.Contains(err.Error(), "Usage: `/"+name) {
				t.Errorf("error %q lacks the usage line of /%s", err, name)
			}
		})
	}
}

func TestStringRoundTrip(t *testing.T) {
	cmds := []Command{
		Plan{}, Plan{Layers: []string{"a", "b/c@prod"}}, Apply{Layers: []string{"x"}}, Unlock{}, Cancel{},
		Takeover{}, Takeover{Sync: "dev"}, Takeover{Duration: 36 * time.Hour},
		Takeover{Sync: "dev", Duration: 90 * time.Minute},
		Release{}, Release{Sync: "dev"},
		HelmTest{}, HelmTest{Releases: []string{"api"}, Filters: []string{"smoke", "db"}},
		Help{},
	}
	for _, c := range cmds {
		got, err := Parse(c.String())
		if err != nil || !reflect.DeepEqual(got, c) {
			t.Errorf("Parse(%q) = %#v, %v; want %#v", c.String(), got, err, c)
		}
	}
}

func TestUsageListsEveryCommand(t *testing.T) {
	u := Usage()
	for _, name := range commandOrder {
		if !strings.Contains(u, "`"+usageLine[name]+"`") {
			t.Errorf("Usage() lacks %s", usageLine[name])
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"/plan", "/plan a b", "\r\n/apply network\r\n", "/takeover dev 2h", "/takeover 1d12h",
		"/release dev", "/helm-test api --filter smoke --filter=db", "/help", "/lgtm",
		"> /apply", "/plan ../x", "/takeover dev -1s", "/helm-test --filter",
		"/cancel", "/cancel network",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		c, err := Parse(body)
		if err != nil {
			var ue *UsageError
			if !errors.As(err, &ue) {
				t.Fatalf("Parse(%q): error %v is not a *UsageError", body, err)
			}
			if _, known := usageLine[ue.Command]; !known {
				t.Fatalf("Parse(%q): usage error for unknown command %q", body, ue.Command)
			}
			return
		}
		if c == nil {
			return
		}
		again, err := Parse(c.String())
		if err != nil || !reflect.DeepEqual(again, c) {
			t.Fatalf("Parse(%q) = %#v; its String %q parses to %#v, %v", body, c, c.String(), again, err)
		}
	})
}
