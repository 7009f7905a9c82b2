package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// Forum topics came with Bot API 6.0; the library speaks 5.5, so its
// Message has no message_thread_id and its send configs cannot set one.
// This file is the one place that reads and writes them: Thread decodes a
// message's, and Place.params gives every new message, photo, file, chat
// action and draft its place's.

// A Place is where the bot writes: a chat and, in a chat with topics (a
// forum), one of its topics.
type Place struct {
	Chat int64
	// Topic is a forum topic's message_thread_id; 0 is the chat itself,
	// which in a forum is its General topic.
	Topic int
}

// In is the place of chat itself, in no topic.
func In(chat int64) Place { return Place{Chat: chat} }

// String names p for the log: the chat's id, and "/" and the topic's
// when it is one.
func (p Place) String() string {
	if p.Topic == 0 {
		return strconv.FormatInt(p.Chat, 10)
	}
	return strconv.FormatInt(p.Chat, 10) + "/" + strconv.Itoa(p.Topic)
}

// params adds to params the chat and topic of p, and returns them.
func (p Place) params(params tgbotapi.Params) tgbotapi.Params {
	params["chat_id"] = strconv.FormatInt(p.Chat, 10)
	if p.Topic != 0 {
		params["message_thread_id"] = strconv.Itoa(p.Topic)
	}
	return params
}

// LogValue logs p as its String.
func (p Place) LogValue() slog.Value { return slog.StringValue(p.String()) }

// A Thread is what Bot API 5.5's Message lacks of forum topics; decode a
// message's JSON into it beside the library's type.
type Thread struct {
	ID      int  `json:"message_thread_id"`
	IsTopic bool `json:"is_topic_message"`
}

// Topic is the forum topic a message was written in, or 0. Telegram gives
// a thread id to some messages outside any topic too (a reply, in a
// group without topics, names the thread it continues): only
// is_topic_message says the message is in a topic.
func (t Thread) Topic() int {
	if !t.IsTopic || t.ID <= 0 {
		return 0
	}
	return t.ID
}

// TopicGone reports Telegram's answer to a message for a topic that was
// closed or deleted: nothing more can be said there.
func TopicGone(err error) bool {
	var e *tgbotapi.Error
	if !errors.As(err, &e) || e.Code != 400 {
		return false
	}
	msg := strings.ToLower(e.Message)
	return strings.Contains(msg, "topic_closed") || strings.Contains(msg, "topic_deleted") ||
		strings.Contains(msg, "message thread not found") || strings.Contains(msg, "topic_id_invalid")
}

// post sends method to place to, with params and, uploaded, files: as
// Request does (paced, retried, counted), and decodes the message
// Telegram returns, if any.
func (c *Client) post(ctx context.Context, method string, to Place, params tgbotapi.Params, files ...tgbotapi.RequestFile) (tgbotapi.Message, error) {
	params = to.params(params)
	if c.cfg.Pace != nil && paced(method) {
		if err := c.cfg.Pace.Wait(ctx); err != nil {
			return tgbotapi.Message{}, fmt.Errorf("%s: %w", method, err)
		}
	}
	var resp *tgbotapi.APIResponse
	err := c.retry(ctx, method, func() error {
		var err error
		if len(files) > 0 {
			resp, err = c.api.UploadFiles(method, params, files)
		} else {
			resp, err = c.api.MakeRequest(method, params)
		}
		return err
	})
	var m tgbotapi.Message
	if err != nil {
		return m, err
	}
	if len(resp.Result) > 0 && resp.Result[0] == '{' {
		if err := json.Unmarshal(resp.Result, &m); err != nil {
			return m, fmt.Errorf("decode sent message: %w", err)
		}
	}
	return m, nil
}

// message is the parameters of a sendMessage of text, in parse mode mode
// ("" for plain text), quoting replyTo (0: none), with markup (nil: none).
func message(text, mode string, replyTo int, markup any) (tgbotapi.Params, error) {
	p := tgbotapi.Params{"text": text, "disable_web_page_preview": "true"}
	p.AddNonEmpty("parse_mode", mode)
	if replyTo != 0 {
		p.AddNonZero("reply_to_message_id", replyTo)
		p.AddBool("allow_sending_without_reply", true)
	}
	if err := p.AddInterface("reply_markup", markup); err != nil {
		return nil, fmt.Errorf("encode reply markup: %w", err)
	}
	return p, nil
}
