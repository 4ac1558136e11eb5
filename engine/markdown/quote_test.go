package markdown

import (
	"fmt"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	extast "github.com/yuin/goldmark/extension/ast"
	gparser "github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

func TestQuote(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"network", "`network`"},
		{"infra/network@prod", "`infra/network@prod`"},
		{"", "` `"},
		{"   ", "`   `"},
		{"a`b", "``a`b``"},
		{"`", "`` ` ``"},
		{"x` ![img](https://evil/x.png) [link](https://evil) @acme/admins `", "`` x` ![img](https://evil/x.png) [link](https://evil) @acme/admins ` ``"},
		{"```", "```` ``` ````"},
		{"a ``` b `` c", "````a ``` b `` c````"},
		{" a ", "`  a  `"},
		{" a", "` a`"},
		{"line\n\n# heading\r\n- item\r", "`line  # heading - item `"},
		{"nul\x00", "`nul\uFFFD`"},
		{"bad\xffutf8", "`bad\uFFFDutf8`"},
	} {
		if got := Quote(tc.in); got != tc.want {
			t.Errorf("Quote(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestQuoteCell(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"api-test", "`api-test`"},
		{"a|b", "`a｜b`"},
		{"a\\|b ![i](u)", "`a\\｜b ![i](u)`"},
	} {
		if got := QuoteCell(tc.in); got != tc.want {
			t.Errorf("QuoteCell(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	// In a table row, the cell is one code span; the control, Quote in a
	// cell, is split by the | and renders the image.
	const evil = "a|b ![i](u) @x"
	row := "| hook | phase |\n| --- | --- |\n| " + QuoteCell(evil) + " | ok |\n"
	if n := kinds(t, row); n[ast.KindImage] != 0 || n[ast.KindCodeSpan] != 1 {
		t.Errorf("%q renders %v", row, n)
	}
	row = "| hook | phase |\n| --- | --- |\n| " + Quote(evil) + " | ok |\n"
	if n := kinds(t, row); n[ast.KindImage] != 1 {
		t.Errorf("the control %q renders %v: the check proves nothing", row, n)
	}
}

// The attack: a value that closes a single-backtick span and goes on as
// Markdown, in a list item of a comment as the config error shows it.
func TestQuotedTextRendersAsCodeOnly(t *testing.T) {
	evil := "x` ![img](https://evil/x.png) [link](https://evil) @acme/admins <img src=x> https://evil/auto `"
	doc := "- layer name " + Quote(evil) + " is bad\n"
	if n := kinds(t, doc); n[ast.KindImage]+n[ast.KindLink]+n[ast.KindAutoLink]+n[ast.KindRawHTML] != 0 || n[ast.KindCodeSpan] != 1 {
		t.Errorf("%q renders %v", doc, n)
	}
	// The control: the same value between single backticks, as before, is
	// an image, a link and HTML.
	doc = "- layer name `" + evil + "` is bad\n"
	if n := kinds(t, doc); n[ast.KindImage] != 1 || n[ast.KindLink] < 1 || n[ast.KindRawHTML] != 1 {
		t.Errorf("the control %q renders %v: the check proves nothing", doc, n)
	}
}

// For any input: the quote renders as exactly one code span whose text is
// the input (with Quote's documented changes), and nothing else (no link,
// image, HTML, nor text where a mention could fire), wherever it stands in
// a paragraph or a list item.
func FuzzQuote(f *testing.F) {
	for _, s := range []string{"", " ", "`", "``", "a`b", " ` ", "x` ![i](u) `", "\n\n# h", "<b>", "@acme/admins", "\\`", "a\r\nb", "\x00", "\xff", "  `a`  "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := codeText.Replace(strings.ToValidUTF8(s, "\uFFFD"))
		if want == "" {
			want = " "
		}
		q, cell := Quote(s), QuoteCell(s)
		for _, doc := range []string{q, "- " + q + " is bad\n", "the value " + q + ", line 3.",
			"| name | x |\n| --- | --- |\n| " + cell + " | y |\n"} {
			want := want
			if strings.HasPrefix(doc, "| name") {
				want = strings.ReplaceAll(want, "|", "｜")
			}
			src := []byte(doc)
			root := parser().Parse(text.NewReader(src))
			var spans []string
			err := ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
				if !entering {
					return ast.WalkContinue, nil
				}
				switch n.Kind() {
				case ast.KindCodeSpan:
					var b strings.Builder
					for c := n.FirstChild(); c != nil; c = c.NextSibling() {
						b.Write(c.(*ast.Text).Segment.Value(src))
					}
					spans = append(spans, b.String())
					return ast.WalkSkipChildren, nil
				case ast.KindDocument, ast.KindParagraph, ast.KindList, ast.KindListItem, ast.KindTextBlock,
					extast.KindTable, extast.KindTableHeader, extast.KindTableRow, extast.KindTableCell:
				case ast.KindText:
					if t := string(n.(*ast.Text).Segment.Value(src)); strings.ContainsAny(t, "`@<[!") {
						return ast.WalkStop, fmt.Errorf("text outside the code span: %q", t)
					}
				default:
					return ast.WalkStop, fmt.Errorf("a %s node", n.Kind())
				}
				return ast.WalkContinue, nil
			})
			if err != nil {
				t.Fatalf("Quote(%q) = %q in %q: %v", s, q, doc, err)
			}
			if len(spans) != 1 || spans[0] != want {
				t.Fatalf("Quote(%q) = %q in %q renders code spans %q, want one of %q", s, q, doc, spans, want)
			}
		}
	})
}

// parser reads Markdown as GitHub does: CommonMark with its extensions
// (tables, autolinks of bare addresses, strikethrough, task lists).
func parser() gparser.Parser { return goldmark.New(goldmark.WithExtensions(extension.GFM)).Parser() }

// kinds counts the nodes of doc by kind.
func kinds(t *testing.T, doc string) map[ast.NodeKind]int {
	t.Helper()
	n := map[ast.NodeKind]int{}
	err := ast.Walk(parser().Parse(text.NewReader([]byte(doc))), func(node ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			n[node.Kind()]++
		}
		return ast.WalkContinue, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
