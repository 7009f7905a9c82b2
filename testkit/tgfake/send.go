package tgfake

import (
	"encoding/json"
	"strconv"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// sendLocked is sendMessage, sendPhoto and sendDocument, within
// Telegram's limits of text, captions and files.
func (s *Server) sendLocked(method string, p map[string]string, files map[string][]byte) (any, *apiError) {
	chat, e := s.chatID(p)
	if e != nil {
		return nil, e
	}
	kb, apps, e := parseKeyboard(p["reply_markup"])
	if e != nil {
		return nil, e
	}
	if len(apps) > 0 && chat < 0 {
		// Telegram takes web_app buttons only in private chats.
		return nil, badRequest("BUTTON_TYPE_INVALID")
	}
	thread, e := s.threadLocked(chat, p)
	if e != nil {
		return nil, e
	}
	m := &Message{ChatID: chat, FromID: BotUser.ID, ParseMode: p["parse_mode"], Keyboard: kb, WebApps: apps, Topic: thread, Thread: thread}
	m.ReplyTo, _ = strconv.Atoi(p["reply_to_message_id"])
	if method == "sendMessage" {
		if m.Plain, e = parseText(p["text"], p["parse_mode"], 4096, "text"); e != nil {
			return nil, e
		}
		m.Text = p["text"]
	} else if method == "sendDocument" {
		if len(files["document"]) == 0 {
			return nil, badRequest("there is no document in the request")
		}
		if len(files["document"]) > 50<<20 {
			return nil, &apiError{code: 413, desc: "Request Entity Too Large"}
		}
		if m.Plain, e = parseText(p["caption"], p["parse_mode"], 1024, "caption"); e != nil {
			return nil, e
		}
		m.Document, m.DocumentName, m.Caption, m.Text = files["document"], p[fileNameKey+"document"], m.Plain, p["caption"]
	} else {
		photo := files["photo"]
		if len(photo) == 0 {
			return nil, badRequest("there is no photo in the request")
		}
		if m.Plain, e = parseText(p["caption"], p["parse_mode"], 1024, "caption"); e != nil {
			return nil, e
		}
		m.Photo, m.Caption, m.Text = photo, m.Plain, p["caption"]
	}
	m.ID = s.newMsgIDLocked(chat)
	s.msgs[chat] = append(s.msgs[chat], m)
	return s.wireLocked(m), nil
}

// editTextLocked is editMessageText: "not modified" where nothing
// changes, as Telegram answers.
func (s *Server) editTextLocked(p map[string]string) (any, *apiError) {
	m, kb, e := s.editedLocked(p)
	if e != nil {
		return nil, e
	}
	plain, e := parseText(p["text"], p["parse_mode"], 4096, "text")
	if e != nil {
		return nil, e
	}
	if plain == m.Plain && sameKeyboard(kb, m.Keyboard) {
		return nil, notModified
	}
	m.Text, m.Plain, m.ParseMode, m.Keyboard = p["text"], plain, p["parse_mode"], kb
	m.Edits++
	return s.wireLocked(m), nil
}

// editedLocked is the message an edit names, and the keyboard it gives
// it; a bad request where the chat or message is not found or the
// keyboard is not one.
func (s *Server) editedLocked(p map[string]string) (*Message, [][]tgbotapi.InlineKeyboardButton, *apiError) {
	chat, e := s.chatID(p)
	if e != nil {
		return nil, nil, e
	}
	m := s.findLocked(chat, p)
	if m == nil {
		return nil, nil, badRequest("message to edit not found")
	}
	kb, apps, e := parseKeyboard(p["reply_markup"])
	if e != nil {
		return nil, nil, e
	}
	if len(apps) > 0 {
		return nil, nil, badRequest("the fake edits no web_app button in")
	}
	return m, kb, nil
}

// editMarkupLocked is editMessageReplyMarkup.
func (s *Server) editMarkupLocked(p map[string]string) (any, *apiError) {
	m, kb, e := s.editedLocked(p)
	if e != nil {
		return nil, e
	}
	if sameKeyboard(kb, m.Keyboard) {
		return nil, notModified
	}
	m.Keyboard = kb
	m.Edits++
	return s.wireLocked(m), nil
}

// draftLocked is sendMessageDraft, which only a fake made with drafts
// knows (else 404, as a Bot API without them).
func (s *Server) draftLocked(p map[string]string) (any, *apiError) {
	if s.drafts == nil {
		return nil, &apiError{code: 404, desc: "Not Found"}
	}
	chat, e := s.chatID(p)
	if e != nil {
		return nil, e
	}
	if chat < 0 {
		return nil, badRequest("draft can be sent only to private chats")
	}
	thread, e := s.threadLocked(chat, p)
	if e != nil {
		return nil, e
	}
	if id, _ := strconv.ParseInt(p["draft_id"], 10, 64); id == 0 {
		return nil, badRequest("draft_id must be non-zero")
	}
	plain := p["text"]
	if strings.EqualFold(p["parse_mode"], "html") {
		var err error
		if plain, err = ParseHTML(p["text"]); err != nil {
			return nil, badRequest("%v", err)
		}
	}
	if Len(plain) > 4096 {
		return nil, badRequest("message is too long")
	}
	s.drafts[place{chat, thread}] = append(s.drafts[place{chat, thread}], plain)
	return true, nil
}

// setCommandsLocked is setMyCommands, within Telegram's limits of a
// command's name and description.
func (s *Server) setCommandsLocked(p map[string]string) (any, *apiError) {
	var cmds []tgbotapi.BotCommand
	if err := json.Unmarshal([]byte(p["commands"]), &cmds); err != nil {
		return nil, badRequest("can't parse commands JSON object")
	}
	for _, c := range cmds {
		if c.Command == "" || len(c.Command) > 32 || strings.ToLower(c.Command) != c.Command || len(c.Description) < 1 || len(c.Description) > 256 {
			return nil, badRequest("BOT_COMMAND_INVALID")
		}
	}
	key, err := s.scopeKey(p["scope"])
	if err != nil {
		return nil, err
	}
	s.commands[key] = cmds
	return true, nil
}
