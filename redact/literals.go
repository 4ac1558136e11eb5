package redact

import (
	"sort"
	"strings"
)

// prefixLen is how many leading bytes of a value index it: every value is
// at least MinLength long.
const prefixLen = 4

// filterBits is the size of the prefix filter: 8 KiB, which stays in the
// processor's cache while a log streams through.
const filterBits = 1 << 16

// literals is an immutable snapshot of the registered values, and a
// matcher for them. A strings.Replacer looks up a trie at every byte that
// starts some value (in base64 forms, nearly any letter) and copies the
// whole text even when nothing matches; here a position costs a 4-byte
// load and a bit test unless a value's first four bytes are there, and a
// text without a secret is not copied.
type literals struct {
	values []string // longest first
	set    map[string]bool
	// byPrefix holds the values by their first four bytes, longest first;
	// filter has the bit of each such prefix's hash set.
	byPrefix map[uint32][]string
	filter   []uint64
}

func newLiterals(set map[string]bool) *literals {
	l := &literals{set: set, byPrefix: map[uint32][]string{}, filter: make([]uint64, filterBits/64)}
	for s := range set {
		l.values = append(l.values, s)
	}
	// At a position, the longest value wins, as strings.Replacer's first
	// argument does: a secret that extends another is masked whole.
	sort.Slice(l.values, func(i, j int) bool {
		a, b := l.values[i], l.values[j]
		return len(a) > len(b) || len(a) == len(b) && a < b
	})
	for _, s := range l.values {
		k := word(s, 0)
		l.byPrefix[k] = append(l.byPrefix[k], s)
		h := hash(k)
		l.filter[h/64] |= 1 << (h % 64)
	}
	return l
}

// union is the values of l and o together.
func (l *literals) union(o *literals) *literals {
	set := make(map[string]bool, len(l.set)+len(o.set))
	for s := range l.set {
		set[s] = true
	}
	for s := range o.set {
		set[s] = true
	}
	return newLiterals(set)
}

func word[T string | []byte](s T, i int) uint32 {
	return uint32(s[i]) | uint32(s[i+1])<<8 | uint32(s[i+2])<<16 | uint32(s[i+3])<<24
}

func hash(k uint32) uint32 { return (k * 0x9e3779b1) >> (32 - 16) }

// next finds the first value in s at or after from: its start and length,
// the longest value at that start; start is -1 when there is none.
func next[T string | []byte](l *literals, s T, from int) (int, int) {
	if len(l.values) == 0 {
		return -1, 0
	}
	for i := from; i+prefixLen <= len(s); i++ {
		k := word(s, i)
		if h := hash(k); l.filter[h/64]&(1<<(h%64)) == 0 {
			continue
		}
		for _, v := range l.byPrefix[k] {
			if len(v) <= len(s)-i && string(s[i:i+len(v)]) == v {
				return i, len(v)
			}
		}
	}
	return -1, 0
}

// replace masks every value in s, leftmost first, as strings.Replacer
// would; s itself comes back when it has none.
func (l *literals) replace(s string) string {
	i, n := next(l, s, 0)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for i >= 0 {
		b.WriteString(s[last:i])
		b.WriteString(Mask)
		last = i + n
		i, n = next(l, s, last)
	}
	b.WriteString(s[last:])
	return b.String()
}
