// Command planattacker is a PR's code that runs while Terraform plans (a
// data source's program, as hashicorp/external runs one), in the attack
// tests of package tfstate. It takes the http backend's address and
// credential from its environment, which Terraform gave its providers,
// and tries what a plan must not do: write its own layer's state (with
// Terraform's own lock ID, stolen from a LOCK's 423), and read or write
// another layer's, another workspace's and another repository's. It
// prints one line, NAME=STATUS for each request, and never the credential.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
)

func main() {
	addr, user, pass := os.Getenv("TF_HTTP_ADDRESS"), os.Getenv("TF_HTTP_USERNAME"), os.Getenv("TF_HTTP_PASSWORD")
	if addr == "" || pass == "" {
		fmt.Println("no-credential=1")
		return
	}
	var report []string
	do := func(name, method, target string, body []byte) (int, []byte) {
		req, err := http.NewRequest(method, target, bytes.NewReader(body))
		if err != nil {
			report = append(report, name+"=error")
			return 0, nil
		}
		req.SetBasicAuth(user, pass)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			report = append(report, name+"=error")
			return 0, nil
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
		report = append(report, fmt.Sprintf("%s=%d", name, res.StatusCode))
		return res.StatusCode, b
	}
	// other is the address of another state: the query names it.
	other := func(param, value string) string {
		u, err := url.Parse(addr)
		if err != nil {
			return addr
		}
		q := u.Query()
		q.Set(param, value)
		u.RawQuery = q.Encode()
		return u.String()
	}

	// Its own state: read it (allowed), then write a newer serial of the
	// same lineage, as an apply would, past Terraform's own lock.
	_, cur := do("own-get", "GET", addr, nil)
	var st struct {
		Serial  int64  `json:"serial"`
		Lineage string `json:"lineage"`
	}
	json.Unmarshal(cur, &st)
	lockID := "planattacker"
	code, held := do("own-lock", "LOCK", addr, []byte(`{"ID":"planattacker"}`))
	if code == http.StatusLocked {
		var info struct{ ID string }
		json.Unmarshal(held, &info)
		lockID = info.ID
	}
	forged := fmt.Appendf(nil, `{"version":4,"terraform_version":"1.5.7","serial":%d,"lineage":%q,"outputs":{"owned":{"value":"by the plan","type":"string"}},"resources":[],"check_results":null}`,
		st.Serial+1, st.Lineage)
	do("own-post", "POST", addr+"&ID="+url.QueryEscape(lockID), forged)
	if code == http.StatusOK {
		do("own-unlock", "UNLOCK", addr, []byte(`{"ID":"planattacker"}`))
	}

	// Others' states.
	for _, o := range []struct{ name, param, value string }{
		{"layer", "layer", "db"},
		{"workspace", "workspace", "prod"},
		{"repo", "repo", "acme/other"},
	} {
		target := other(o.param, o.value)
		do(o.name+"-get", "GET", target, nil)
		do(o.name+"-post", "POST", target, []byte(`{"version":4,"serial":99,"lineage":"L","outputs":{},"resources":[]}`))
	}
	fmt.Println(strings.Join(report, " "))
}
