package main

import (
	"testing"

	"strata.dev/strata/engine/terraform"
)

// The report's format and colours: text unless asked, on a terminal or
// not; colours only for text on a terminal, and never with NO_COLOR or a
// dumb terminal.
func TestOutputFor(t *testing.T) {
	for _, tc := range []struct {
		format        string
		tty           bool
		noColor, term string
		want          output
		err           string
	}{
		{"", true, "", "xterm-256color", output{format: "text", color: true}, ""},
		{"", false, "", "xterm-256color", output{format: "text", color: false}, ""}, // a pipe gets the same words, uncoloured
		{"text", true, "1", "xterm", output{format: "text", color: false}, ""},      // NO_COLOR, whatever its value
		{"text", true, "", "dumb", output{format: "text", color: false}, ""},
		{"text", true, "", "", output{format: "text", color: true}, ""},
		{"markdown", true, "", "xterm", output{format: "markdown", color: false}, ""}, // markdown is for GitHub, never coloured
		{"json", true, "", "xterm", output{format: "json", color: false}, ""},
		{"json", false, "", "", output{format: "json", color: false}, ""},
		{"jsno", true, "", "xterm", output{}, `--format "jsno": want text, markdown or json (did you mean "json"?)`},
		{"yaml", false, "", "", output{}, `--format "yaml": want text, markdown or json`},
	} {
		got, err := outputFor(tc.format, tc.tty, tc.noColor, tc.term)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if got != tc.want || gotErr != tc.err {
			t.Errorf("outputFor(%q, tty %v, NO_COLOR %q, TERM %q) = %+v, %q; want %+v, %q",
				tc.format, tc.tty, tc.noColor, tc.term, got, gotErr, tc.want, tc.err)
		}
	}
}

// Plan lines are coloured by their action symbol only, as Terraform does.
func TestPlanLine(t *testing.T) {
	for _, tc := range []struct {
		line  string
		color bool
		want  string
	}{
		{`  + resource "terraform_data" "x" {`, true, "  \x1b[32m+\x1b[0m resource \"terraform_data\" \"x\" {"},
		{`      - id = "a" -> null`, true, "      \x1b[31m-\x1b[0m id = \"a\" -> null"},
		{`  ~ input = "a" -> "b"`, true, "  \x1b[33m~\x1b[0m input = \"a\" -> \"b\""},
		{`-/+ resource "terraform_data" "r" {`, true, "\x1b[33m-/+\x1b[0m resource \"terraform_data\" \"r\" {"},
		{`  + resource "terraform_data" "x" {`, false, `  + resource "terraform_data" "x" {`},
		{`Plan: 1 to add, 0 to change, 0 to destroy.`, true, `Plan: 1 to add, 0 to change, 0 to destroy.`},
		{`  # terraform_data.x will be created`, true, `  # terraform_data.x will be created`},
		{`+`, true, "\x1b[32m+\x1b[0m"},
	} {
		if got := planLine(paint(tc.color), tc.line); got != tc.want {
			t.Errorf("planLine(%q, color %v) = %q, want %q", tc.line, tc.color, got, tc.want)
		}
	}
}

func TestRepoOfRemote(t *testing.T) {
	for url, want := range map[string]string{
		"git@github.com:acme/app.git":           "acme/app",
		"https://github.com/acme/app":           "acme/app",
		"https://github.com/acme/app.git/":      "acme/app",
		"ssh://git@ghe.example:22/acme/app.git": "acme/app",
		"":                                      "local",
		"/srv/git/app":                          "local",
		"https://github.com/":                   "local",
	} {
		if got := repoOfRemote(url); got != want {
			t.Errorf("repoOfRemote(%q) = %q, want %q", url, got, want)
		}
	}
}

// A missing binary is named with the variable that sets it and the
// server's setting, before anything runs.
func TestFindLocalBinary(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	for _, tc := range []struct {
		env, name, set string
		kind           terraform.Kind
		want           string
	}{
		{"STRATA_TERRAFORM_BIN", "terraform", "", terraform.KindTerraform,
			"no terraform on the PATH: install Terraform, or set STRATA_TERRAFORM_BIN to its binary's path " +
				"(the server runs the binaries of terraform_bin and terraform.binaries in its config, STRATA_TERRAFORM_BINARIES)"},
		{"STRATA_TOFU_BIN", "tofu", "", terraform.KindTofu,
			"no tofu on the PATH: install OpenTofu, or set STRATA_TOFU_BIN to its binary's path " +
				"(the server runs the binaries of terraform_bin and terraform.binaries in its config, STRATA_TERRAFORM_BINARIES)"},
		{"STRATA_TERRAFORM_BIN", "terraform", "/nonexistent/terraform", terraform.KindTerraform,
			"STRATA_TERRAFORM_BIN=/nonexistent/terraform is not an executable file: exec: \"/nonexistent/terraform\": stat /nonexistent/terraform: no such file or directory; " +
				"set it to the Terraform binary's path (the server runs the binaries of terraform_bin and terraform.binaries in its config, STRATA_TERRAFORM_BINARIES)"},
	} {
		_, _, err := findLocalBinary(tc.env, tc.name, tc.set, tc.kind)
		if err == nil || err.Error() != tc.want {
			t.Errorf("findLocalBinary(%s=%q) = %v\nwant %s", tc.env, tc.set, err, tc.want)
		}
	}
}
