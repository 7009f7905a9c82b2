package tgfake

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Forums: a supergroup with topics (or, since Bot API 9.3, a bot's
// private chat with them). A message written in a topic carries its
// message_thread_id and is_topic_message; everything the bot sends there
// names the topic with message_thread_id, which the fake records on each
// message, chat action and draft. A topic closed or deleted answers what
// Telegram does: 400 TOPIC_CLOSED, 400 message thread not found.

// A place is a chat, or one of its topics.
type place struct {
	chat  int64
	topic int
}

// A topic is one of a forum's topics.
type topic struct {
	name            string
	closed, deleted bool
}

// CreateTopic makes chat a forum, if it is not one yet, with a new open
// topic named name, and returns its message_thread_id.
func (s *Server) CreateTopic(chat int64, name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.forums[chat] == nil {
		s.forums[chat] = map[int]*topic{}
	}
	// A topic's id is that of the service message that created it.
	id := s.newMsgIDLocked(chat)
	s.forums[chat][id] = &topic{name: name}
	return id
}

// CloseTopic closes a topic of chat: nothing more can be sent to it.
func (s *Server) CloseTopic(chat int64, id int) {
	s.setTopic(chat, id, func(t *topic) { t.closed = true })
}

// DeleteTopic deletes a topic of chat, with its messages.
func (s *Server) DeleteTopic(chat int64, id int) {
	s.setTopic(chat, id, func(t *topic) { t.deleted = true })
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.msgs[chat] {
		if m.Topic == id {
			m.Deleted = true
		}
	}
}

func (s *Server) setTopic(chat int64, id int, change func(*topic)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.forums[chat][id]
	if t == nil {
		panic(fmt.Sprintf("tgfake: chat %d has no topic %d", chat, id))
	}
	change(t)
	s.notifyLocked()
}

// threadLocked is the topic a send's message_thread_id names in chat, 0
// for none, or Telegram's answer to a topic that is not there to write
// in.
func (s *Server) threadLocked(chat int64, p map[string]string) (int, *apiError) {
	raw := p["message_thread_id"]
	if raw == "" {
		return 0, nil
	}
	id, err := strconv.Atoi(raw)
	t := s.forums[chat][id]
	switch {
	case err != nil || id <= 0:
		return 0, badRequest("invalid message thread identifier specified")
	case t == nil || t.deleted:
		// Also a chat without topics: a reply's thread is no topic.
		return 0, badRequest("message thread not found")
	case t.closed:
		return 0, badRequest("TOPIC_CLOSED")
	}
	return id, nil
}

// wireThread adds to the update JSON b, in its field kind ("message", or
// "callback_query" for the pressed message), what the library's types
// lack of m (which may be nil): its message_thread_id and, in a topic,
// is_topic_message.
func wireThread(b []byte, kind string, m *Message) []byte {
	if m == nil || m.Thread == 0 {
		return b
	}
	var u, obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &u); err != nil {
		panic(err)
	}
	if err := json.Unmarshal(u[kind], &obj); err != nil {
		panic(err)
	}
	if kind == "callback_query" {
		var msg map[string]json.RawMessage
		if err := json.Unmarshal(obj["message"], &msg); err != nil {
			panic(err)
		}
		addThread(msg, m)
		obj["message"] = mustJSON(msg)
	} else {
		addThread(obj, m)
	}
	u[kind] = mustJSON(obj)
	return mustJSON(u)
}

func addThread(msg map[string]json.RawMessage, m *Message) {
	msg["message_thread_id"] = mustJSON(m.Thread)
	if m.Topic != 0 {
		msg["is_topic_message"] = mustJSON(true)
	}
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// MessagesIn returns a snapshot of the bot's live messages in a topic of
// chat (0: the chat itself, or a forum's General topic).
func (s *Server) MessagesIn(chat int64, topic int) []Message {
	var out []Message
	for _, m := range s.Messages(chat) {
		if m.Topic == topic {
			out = append(out, m)
		}
	}
	return out
}

// ActionsIn returns how many chat actions were sent to a topic of chat
// (0: the chat itself).
func (s *Server) ActionsIn(chat int64, topic int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.actions[place{chat, topic}]
}

// DraftsIn returns the visible text of each draft frame streamed to a
// topic of chat (0: the chat itself).
func (s *Server) DraftsIn(chat int64, topic int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.drafts[place{chat, topic}]...)
}

// WaitIn is WaitText in a topic of chat: it waits until a final message
// there shows want, and returns it.
func (s *Server) WaitIn(t testing.TB, chat int64, topic int, want string) Message {
	t.Helper()
	var got Message
	s.WaitFor(t, 30*time.Second, fmt.Sprintf("a message containing %q in topic %d of chat %d", want, topic, chat), func() bool {
		for _, m := range s.MessagesIn(chat, topic) {
			if strings.Contains(m.Plain, want) && !strings.HasSuffix(m.Plain, "▌") {
				got = m
				return true
			}
		}
		return false
	})
	return got
}
