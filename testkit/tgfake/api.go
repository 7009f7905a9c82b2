package tgfake

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// apiError is an {"ok":false} answer.
type apiError struct {
	code       int
	desc       string
	retryAfter int
}

func badRequest(format string, args ...any) *apiError {
	return &apiError{code: 400, desc: "Bad Request: " + fmt.Sprintf(format, args...)}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/file/") {
		s.serveFile(w, r)
		return
	}
	parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 2)
	if len(parts) != 2 || !strings.HasPrefix(parts[0], "bot") {
		writeErr(w, &apiError{code: 404, desc: "Not Found"})
		return
	}
	if parts[0] != "bot"+Token {
		writeErr(w, &apiError{code: 401, desc: "Unauthorized"})
		return
	}
	method := parts[1]
	params, files, err := readParams(r)
	if err != nil {
		writeErr(w, badRequest("%v", err))
		return
	}
	s.mu.Lock()
	s.calls = append(s.calls, Call{Method: method, Params: params, At: time.Now()})
	if q := s.fails[method]; len(q) > 0 {
		f := q[0]
		s.fails[method] = q[1:]
		s.notifyLocked()
		s.mu.Unlock()
		writeErr(w, &apiError{code: f.code, desc: f.desc, retryAfter: f.retryAfter})
		return
	}
	s.mu.Unlock()

	var result any
	var aerr *apiError
	switch method {
	case "getUpdates":
		result, aerr = s.getUpdates(r, params)
	case "getMe":
		result = BotUser
	default:
		s.mu.Lock()
		result, aerr = s.handleLocked(method, params, files)
		s.notifyLocked()
		s.mu.Unlock()
	}
	if aerr != nil {
		writeErr(w, aerr)
		return
	}
	b, err := json.Marshal(result)
	if err != nil {
		writeErr(w, &apiError{code: 500, desc: "Internal Server Error"})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"ok":true,"result":%s}`, b)
}

func writeErr(w http.ResponseWriter, e *apiError) {
	body := map[string]any{"ok": false, "error_code": e.code, "description": e.desc}
	if e.retryAfter > 0 {
		body["parameters"] = map[string]any{"retry_after": e.retryAfter}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.code)
	_ = json.NewEncoder(w).Encode(body)
}

// readParams flattens form, multipart or JSON parameters into strings, as
// Telegram treats them (JSON objects become their JSON text).
func readParams(r *http.Request) (map[string]string, map[string][]byte, error) {
	params := map[string]string{}
	files := map[string][]byte{}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			return nil, nil, fmt.Errorf("invalid JSON: %w", err)
		}
		for k, v := range body {
			switch v := v.(type) {
			case string:
				params[k] = v
			default:
				b, _ := json.Marshal(v)
				params[k] = string(b)
			}
		}
	case "multipart/form-data":
		if err := r.ParseMultipartForm(32 << 20); err != nil {
			return nil, nil, err
		}
		for k, v := range r.MultipartForm.Value {
			params[k] = v[0]
		}
		for k, fhs := range r.MultipartForm.File {
			f, err := fhs[0].Open()
			if err != nil {
				return nil, nil, err
			}
			b, err := io.ReadAll(f)
			f.Close()
			if err != nil {
				return nil, nil, err
			}
			files[k] = b
			params[fileNameKey+k] = fhs[0].Filename
		}
	default:
		if err := r.ParseForm(); err != nil {
			return nil, nil, err
		}
		for k, v := range r.Form {
			params[k] = v[0]
		}
	}
	return params, files, nil
}

func (s *Server) getUpdates(r *http.Request, p map[string]string) (any, *apiError) {
	offset, _ := strconv.Atoi(p["offset"])
	timeout, _ := strconv.Atoi(p["timeout"])
	limit, _ := strconv.Atoi(p["limit"])
	if limit <= 0 || limit > 100 {
		limit = 100
	}
	s.mu.Lock()
	if s.hook != nil {
		s.mu.Unlock()
		return nil, &apiError{code: 409, desc: "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first"}
	}
	if s.polling {
		s.mu.Unlock()
		return nil, &apiError{code: 409, desc: "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"}
	}
	s.polling = true
	defer func() {
		s.mu.Lock()
		s.polling = false
		s.mu.Unlock()
	}()
	if offset > 0 {
		// An offset confirms every update below it: Telegram forgets them.
		n := 0
		for n < len(s.updateIDs) && s.updateIDs[n] < offset {
			n++
		}
		s.updates, s.updateIDs = s.updates[n:], s.updateIDs[n:]
		if offset > s.confirmed {
			s.confirmed = offset
		}
	}
	deadline := time.After(time.Duration(timeout) * time.Second)
	for len(s.updates) == 0 && timeout > 0 {
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			timeout = 0
		case <-r.Context().Done():
			return []json.RawMessage{}, nil
		}
		s.mu.Lock()
	}
	n := min(limit, len(s.updates))
	out := append([]json.RawMessage{}, s.updates[:n]...)
	s.mu.Unlock()
	return out, nil
}

func (s *Server) chatID(p map[string]string) (int64, *apiError) {
	id, err := strconv.ParseInt(p["chat_id"], 10, 64)
	if err != nil || id == 0 {
		return 0, badRequest("chat not found")
	}
	return id, nil
}

func (s *Server) findLocked(chat int64, p map[string]string) *Message {
	id, _ := strconv.Atoi(p["message_id"])
	for _, m := range s.msgs[chat] {
		if m.ID == id && m.FromID == BotUser.ID && !m.Deleted {
			return m
		}
	}
	return nil
}

// parseText applies parse_mode and the length limit.
func parseText(text, mode string, limit int, what string) (string, *apiError) {
	plain := text
	switch strings.ToLower(mode) {
	case "":
	case "html":
		var err error
		if plain, err = ParseHTML(text); err != nil {
			return "", badRequest("%v", err)
		}
	default:
		return "", badRequest("unsupported parse_mode %q in this fake", mode)
	}
	plain = strings.TrimSpace(plain)
	if what == "text" && plain == "" {
		return "", badRequest("message text is empty")
	}
	if Len(plain) > limit {
		if what == "caption" {
			return "", badRequest("message caption is too long")
		}
		return "", badRequest("message is too long")
	}
	return plain, nil
}

// A WebApp is an inline button that opens a Mini App (web_app), which
// go-telegram-bot-api's button type has no field for.
type WebApp struct {
	Text, URL string
}

// parseKeyboard reads an inline keyboard as Telegram does. A web_app
// button stands in the keyboard with its text alone, and is listed in
// apps too; Telegram takes them only over https.
func parseKeyboard(raw string) (kb [][]tgbotapi.InlineKeyboardButton, apps []WebApp, e *apiError) {
	if raw == "" || raw == "null" {
		return nil, nil, nil
	}
	var mk tgbotapi.InlineKeyboardMarkup
	var extra struct {
		InlineKeyboard [][]struct {
			WebApp *struct {
				URL string `json:"url"`
			} `json:"web_app"`
		} `json:"inline_keyboard"`
	}
	if json.Unmarshal([]byte(raw), &mk) != nil || json.Unmarshal([]byte(raw), &extra) != nil {
		return nil, nil, badRequest("can't parse reply keyboard markup JSON object")
	}
	for i, row := range mk.InlineKeyboard {
		for j, b := range row {
			if b.Text == "" {
				return nil, nil, badRequest("BUTTON_TEXT_EMPTY")
			}
			if w := extra.InlineKeyboard[i][j].WebApp; w != nil {
				if !strings.HasPrefix(w.URL, "https://") {
					return nil, nil, badRequest("BUTTON_URL_INVALID")
				}
				apps = append(apps, WebApp{Text: b.Text, URL: w.URL})
				continue
			}
			if b.CallbackData == nil && b.URL == nil {
				return nil, nil, badRequest("can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard")
			}
			if b.CallbackData != nil && (len(*b.CallbackData) == 0 || len(*b.CallbackData) > 64) {
				return nil, nil, badRequest("BUTTON_DATA_INVALID")
			}
		}
	}
	if len(mk.InlineKeyboard) == 0 {
		return [][]tgbotapi.InlineKeyboardButton{}, nil, nil
	}
	return mk.InlineKeyboard, apps, nil
}

func sameKeyboard(a, b [][]tgbotapi.InlineKeyboardButton) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return string(x) == string(y)
}

func (s *Server) handleLocked(method string, p map[string]string, files map[string][]byte) (any, *apiError) {
	switch method {
	case "getFile":
		return s.getFileLocked(p)
	case "getChatMember":
		return s.getChatMemberLocked(p)
	case "setWebhook":
		return s.setWebhookLocked(p)
	case "deleteWebhook":
		s.deleteWebhookLocked(p)
		return true, nil
	case "getWebhookInfo":
		return s.webhookInfoLocked(), nil
	case "sendMessage", "sendPhoto", "sendDocument":
		return s.sendLocked(method, p, files)
	case "editMessageText":
		return s.editTextLocked(p)
	case "editMessageReplyMarkup":
		return s.editMarkupLocked(p)
	case "deleteMessage":
		chat, e := s.chatID(p)
		if e != nil {
			return nil, e
		}
		m := s.findLocked(chat, p)
		if m == nil {
			return nil, badRequest("message to delete not found")
		}
		m.Deleted = true
		return true, nil
	case "answerCallbackQuery":
		cb := s.callbacks[p["callback_query_id"]]
		if cb == nil || cb.answered {
			return nil, badRequest("query is too old and response timeout expired or query ID is invalid")
		}
		if Len(p["text"]) > 200 {
			return nil, badRequest("MESSAGE_TOO_LONG")
		}
		cb.answered = true
		cb.answer = CallbackAnswer{Text: p["text"], ShowAlert: p["show_alert"] == "true"}
		return true, nil
	case "sendChatAction":
		chat, e := s.chatID(p)
		if e != nil {
			return nil, e
		}
		if p["action"] == "" {
			return nil, badRequest("wrong parameter action in request")
		}
		thread, e := s.threadLocked(chat, p)
		if e != nil {
			return nil, e
		}
		s.actions[place{chat, thread}]++
		return true, nil
	case "sendMessageDraft":
		return s.draftLocked(p)
	case "setMyCommands":
		return s.setCommandsLocked(p)
	case "deleteMyCommands":
		key, err := s.scopeKey(p["scope"])
		if err != nil {
			return nil, err
		}
		delete(s.commands, key)
		return true, nil
	}
	return nil, &apiError{code: 404, desc: "Not Found"}
}
