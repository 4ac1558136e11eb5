package githubtest

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Webhook delivery, signed like GitHub and validated against GitHub's
// webhook payload schemas.

const webhooksDoc = "https://githubtest.invalid/webhooks.json"

var (
	hooksMu       sync.Mutex
	hooksCompiler *jsonschema.Compiler
	hooksErr      error
	hookSchemas   = map[string]*jsonschema.Schema{}
)

// webhookSchema compiles, once, the schema of a webhook key such as
// issue-comment-created.
func webhookSchema(key string) (*jsonschema.Schema, error) {
	hooksMu.Lock()
	defer hooksMu.Unlock()
	if sch, ok := hookSchemas[key]; ok {
		return sch, nil
	}
	if hooksCompiler == nil && hooksErr == nil {
		hooksErr = func() error {
			f, err := os.Open(filepath.Join(apiDir(), "webhooks.api.github.com.json"))
			if err != nil {
				return err
			}
			defer f.Close()
			doc, err := jsonschema.UnmarshalJSON(f)
			if err != nil {
				return err
			}
			c := jsonschema.NewCompiler()
			if err := c.AddResource(webhooksDoc, doc); err != nil {
				return err
			}
			hooksCompiler = c
			return nil
		}()
	}
	if hooksErr != nil {
		return nil, fmt.Errorf("load webhook schemas: %w", hooksErr)
	}
	sch, err := hooksCompiler.Compile(webhooksDoc + "#/webhooks/" + key + "/post/requestBody/content/application~1json/schema")
	if err != nil {
		return nil, fmt.Errorf("no webhook schema %q: %w", key, err)
	}
	hookSchemas[key] = sch
	return sch, nil
}

// ValidateWebhook checks a payload against GitHub's schema for the event
// and the payload's action.
func ValidateWebhook(event string, payload any) error {
	raw, err := json.Marshal(payload)
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	key := strings.ReplaceAll(event, "_", "-")
	if m, ok := inst.(map[string]any); ok {
		if action, ok := m["action"].(string); ok {
			key += "-" + strings.ReplaceAll(action, "_", "-")
		}
	}
	sch, err := webhookSchema(key)
	if err != nil {
		return err
	}
	if err := sch.Validate(inst); err != nil {
		return fmt.Errorf("%s payload: %w", key, err)
	}
	return nil
}

// Deliver POSTs a webhook to hookURL as GitHub does: JSON body, X-GitHub-Event,
// X-GitHub-Delivery, X-GitHub-Hook-ID, and X-Hub-Signature-256 signed with
// secret. A payload GitHub would not send fails t. The caller closes the
// response body.
func Deliver(t testing.TB, hookURL, secret, event, deliveryID string, payload any) *http.Response {
	t.Helper()
	if err := ValidateWebhook(event, payload); err != nil {
		t.Errorf("githubtest: GitHub would not send this %s webhook: %v", event, err)
	}
	body, err := json.Marshal(payload)
	if err != nil {
		t.Fatalf("githubtest: marshal %s payload: %v", event, err)
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	req, err := http.NewRequest(http.MethodPost, hookURL, bytes.NewReader(body))
	if err != nil {
		t.Fatalf("githubtest: %v", err)
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "GitHub-Hookshot/githubtest")
	h.Set("X-GitHub-Event", event)
	h.Set("X-GitHub-Delivery", deliveryID)
	h.Set("X-GitHub-Hook-ID", "7654321")
	h.Set("X-GitHub-Hook-Installation-Target-Type", "integration")
	h.Set("X-GitHub-Hook-Installation-Target-ID", "424242")
	h.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("githubtest: deliver %s: %v", event, err)
	}
	return resp
}
