package terraform

import "bytes"

// jsonKeeper keeps what show -json prints, up to max bytes; past them it
// keeps nothing, so a plan too large to evaluate costs no more memory.
type jsonKeeper struct {
	buf  bytes.Buffer
	max  int64
	over bool
}

func (k *jsonKeeper) Write(p []byte) (int, error) {
	if !k.over {
		if int64(k.buf.Len()+len(p)) > k.max {
			k.over = true
			k.buf = bytes.Buffer{}
		} else {
			k.buf.Write(p)
		}
	}
	return len(p), nil
}

func (k *jsonKeeper) result() ([]byte, bool) {
	if k.over {
		return nil, true
	}
	return k.buf.Bytes(), false
}
