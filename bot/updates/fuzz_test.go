package updates_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// seeds adds every update kind, whole, to f's corpus, as args returns
// them; the second argument of each is a mask of fields to drop.
func seeds(f *testing.F, withID bool) {
	for _, k := range tgfake.Kinds {
		ex := k.Example
		if withID {
			ex = `{"update_id":1,` + ex[1:]
		}
		f.Add([]byte(ex), uint64(0))
		f.Add([]byte(ex), uint64(0b1010))
	}
}

// Whatever a webhook request carries (with the secret), the handler
// answers 200 to an update, which it stored or dropped with a log line,
// and 400 to what is no update; it never panics.
func FuzzWebhook(f *testing.F) {
	seeds(f, true)
	f.Add([]byte(`not json`), uint64(0))
	f.Add([]byte(`{"update_id":0}`), uint64(0))
	f.Add([]byte(`{"update_id":5,"message":"x"}`), uint64(0))
	in := newIntake(f, nil)
	f.Fuzz(func(t *testing.T, raw []byte, drop uint64) {
		body := tgfake.Drop(raw, drop)
		in.log.Reset()
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/telegram", bytes.NewReader(body))
		req.Header.Set("X-Telegram-Bot-Api-Secret-Token", secret)
		in.rcv.ServeHTTP(rec, req)
		var head struct {
			UpdateID int64 `json:"update_id"`
		}
		isUpdate := json.Unmarshal(body, &head) == nil && head.UpdateID > 0
		switch {
		case rec.Code == http.StatusOK && isUpdate:
			in.checkTaken(t, head.UpdateID, body)
		case rec.Code == http.StatusBadRequest && !isUpdate:
		default:
			t.Errorf("%q: answered %d (an update: %v)", body, rec.Code, isUpdate)
		}
	})
}

// Whatever update getUpdates returns, polling stores it or drops it with
// a log line, confirms it, and goes on; it never panics.
func FuzzPoll(f *testing.F) {
	seeds(f, false)
	f.Add([]byte(`{"message":{"message_id":"seven"}}`), uint64(0))
	in := newIntake(f, nil)
	f.Fuzz(func(t *testing.T, raw []byte, drop uint64) {
		body := tgfake.Drop(raw, drop)
		var obj map[string]json.RawMessage
		if json.Unmarshal(body, &obj) != nil {
			return // Telegram sends JSON objects; the fake sends nothing else
		}
		in.log.Reset()
		id := in.poll(t, body)
		in.checkTaken(t, id, body)
	})
}
