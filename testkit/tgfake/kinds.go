package tgfake

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
)

// A Kind is one kind of update the Bot API defines, with an example of
// it as Telegram sends it (without update_id, which the fake sets).
type Kind struct {
	Name    string
	Example string
}

// Kinds has an example of every update kind of the Bot API (9.x): what a
// bot may be sent, whether or not it asked for it.
var Kinds = []Kind{
	{"message", `{"message":{"message_id":7,"from":{"id":2,"is_bot":false,"first_name":"Alice","username":"alice","language_code":"en"},"chat":{"id":2,"type":"private","first_name":"Alice"},"date":1700000000,"text":"/start hello","entities":[{"type":"bot_command","offset":0,"length":6}],"reply_to_message":{"message_id":6,"chat":{"id":2,"type":"private"},"date":1699999999,"text":"earlier"},"photo":[{"file_id":"p1","file_unique_id":"u1","width":90,"height":90,"file_size":1000}],"document":{"file_id":"d1","file_unique_id":"u2","file_name":"a.txt","mime_type":"text/plain","file_size":10},"caption":"see","media_group_id":"g1"}}`},
	{"edited_message", `{"edited_message":{"message_id":7,"from":{"id":2,"is_bot":false,"first_name":"Alice"},"chat":{"id":2,"type":"private"},"date":1700000000,"edit_date":1700000100,"text":"hello again"}}`},
	{"channel_post", `{"channel_post":{"message_id":3,"sender_chat":{"id":-1001,"type":"channel","title":"News"},"chat":{"id":-1001,"type":"channel","title":"News"},"date":1700000000,"text":"post"}}`},
	{"edited_channel_post", `{"edited_channel_post":{"message_id":3,"chat":{"id":-1001,"type":"channel","title":"News"},"date":1700000000,"edit_date":1700000100,"text":"post, edited"}}`},
	{"business_connection", `{"business_connection":{"id":"bc1","user":{"id":2,"is_bot":false,"first_name":"Alice"},"user_chat_id":2,"date":1700000000,"can_reply":true,"is_enabled":true}}`},
	{"business_message", `{"business_message":{"message_id":9,"business_connection_id":"bc1","from":{"id":5,"is_bot":false,"first_name":"Eve"},"chat":{"id":5,"type":"private"},"date":1700000000,"text":"hi shop"}}`},
	{"edited_business_message", `{"edited_business_message":{"message_id":9,"business_connection_id":"bc1","chat":{"id":5,"type":"private"},"date":1700000000,"edit_date":1700000001,"text":"hi shop!"}}`},
	{"deleted_business_messages", `{"deleted_business_messages":{"business_connection_id":"bc1","chat":{"id":5,"type":"private"},"message_ids":[9,10]}}`},
	{"message_reaction", `{"message_reaction":{"chat":{"id":-100,"type":"supergroup","title":"G"},"message_id":4,"user":{"id":2,"is_bot":false,"first_name":"Alice"},"date":1700000000,"old_reaction":[],"new_reaction":[{"type":"emoji","emoji":"👍"}]}}`},
	{"message_reaction_count", `{"message_reaction_count":{"chat":{"id":-1001,"type":"channel","title":"News"},"message_id":3,"date":1700000000,"reactions":[{"type":{"type":"emoji","emoji":"🔥"},"total_count":5}]}}`},
	{"inline_query", `{"inline_query":{"id":"iq1","from":{"id":2,"is_bot":false,"first_name":"Alice"},"query":"weather","offset":"","chat_type":"private"}}`},
	{"chosen_inline_result", `{"chosen_inline_result":{"result_id":"r1","from":{"id":2,"is_bot":false,"first_name":"Alice"},"inline_message_id":"im1","query":"weather"}}`},
	{"callback_query", `{"callback_query":{"id":"cq1","from":{"id":2,"is_bot":false,"first_name":"Alice"},"message":{"message_id":8,"from":{"id":123456,"is_bot":true,"first_name":"mcpgram"},"chat":{"id":2,"type":"private"},"date":1700000000,"text":"Approve?"},"chat_instance":"ci","data":"v:1:a"}}`},
	// A button on a message sent in inline mode: no message, only its id.
	{"callback_query_inline", `{"callback_query":{"id":"cq2","from":{"id":2,"is_bot":false,"first_name":"Alice"},"inline_message_id":"im1","chat_instance":"ci","data":"v:1:a"}}`},
	// A button on a message too old to send: an InaccessibleMessage (date 0).
	{"callback_query_inaccessible", `{"callback_query":{"id":"cq3","from":{"id":2,"is_bot":false,"first_name":"Alice"},"message":{"chat":{"id":2,"type":"private"},"message_id":1,"date":0},"chat_instance":"ci","data":"v:1:a"}}`},
	{"shipping_query", `{"shipping_query":{"id":"sq1","from":{"id":2,"is_bot":false,"first_name":"Alice"},"invoice_payload":"p","shipping_address":{"country_code":"DE","state":"","city":"Berlin","street_line1":"A 1","street_line2":"","post_code":"10115"}}}`},
	{"pre_checkout_query", `{"pre_checkout_query":{"id":"pq1","from":{"id":2,"is_bot":false,"first_name":"Alice"},"currency":"XTR","total_amount":10,"invoice_payload":"p"}}`},
	{"purchased_paid_media", `{"purchased_paid_media":{"from":{"id":2,"is_bot":false,"first_name":"Alice"},"paid_media_payload":"pm"}}`},
	{"poll", `{"poll":{"id":"po1","question":"Tea?","options":[{"text":"yes","voter_count":1},{"text":"no","voter_count":0}],"total_voter_count":1,"is_closed":false,"is_anonymous":true,"type":"regular","allows_multiple_answers":false}}`},
	{"poll_answer", `{"poll_answer":{"poll_id":"po1","user":{"id":2,"is_bot":false,"first_name":"Alice"},"option_ids":[0]}}`},
	{"my_chat_member", `{"my_chat_member":{"chat":{"id":-100,"type":"supergroup","title":"G"},"from":{"id":2,"is_bot":false,"first_name":"Alice"},"date":1700000000,"old_chat_member":{"status":"left","user":{"id":123456,"is_bot":true,"first_name":"mcpgram"}},"new_chat_member":{"status":"member","user":{"id":123456,"is_bot":true,"first_name":"mcpgram"}}}}`},
	{"chat_member", `{"chat_member":{"chat":{"id":-100,"type":"supergroup","title":"G"},"from":{"id":2,"is_bot":false,"first_name":"Alice"},"date":1700000000,"old_chat_member":{"status":"member","user":{"id":3,"is_bot":false,"first_name":"Bob"}},"new_chat_member":{"status":"kicked","user":{"id":3,"is_bot":false,"first_name":"Bob"},"until_date":0}}}`},
	{"chat_join_request", `{"chat_join_request":{"chat":{"id":-100,"type":"supergroup","title":"G"},"from":{"id":4,"is_bot":false,"first_name":"Carol"},"user_chat_id":4,"date":1700000000}}`},
	{"chat_boost", `{"chat_boost":{"chat":{"id":-1001,"type":"channel","title":"News"},"boost":{"boost_id":"b1","add_date":1700000000,"expiration_date":1800000000,"source":{"source":"premium","user":{"id":2,"is_bot":false,"first_name":"Alice"}}}}}`},
	{"removed_chat_boost", `{"removed_chat_boost":{"chat":{"id":-1001,"type":"channel","title":"News"},"boost_id":"b1","remove_date":1700000000,"source":{"source":"premium","user":{"id":2,"is_bot":false,"first_name":"Alice"}}}}`},
}

// Omissions returns a copy of the JSON object raw for each field anywhere
// in it (in objects nested at any depth, arrays included), without that
// field: every way an update can lack one of its fields.
func Omissions(raw []byte) ([][]byte, error) {
	v, err := decodeOrdered(raw)
	if err != nil {
		return nil, err
	}
	n := countFields(v)
	out := make([][]byte, 0, n)
	for i := range n {
		k := i
		b, err := json.Marshal(without(v, func() bool { k--; return k == -1 }))
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// Drop returns raw without the fields whose place in a walk of the JSON
// (depth first, in order) has its bit set in mask, modulo 64; raw that is
// not JSON is returned as it is. A fuzz test gets at every combination of
// absent fields this way, where mutating bytes mostly breaks the JSON.
func Drop(raw []byte, mask uint64) []byte {
	if mask == 0 {
		return raw
	}
	v, err := decodeOrdered(raw)
	if err != nil {
		return raw
	}
	i := -1
	b, err := json.Marshal(without(v, func() bool { i++; return mask&(1<<(i%64)) != 0 }))
	if err != nil {
		return raw
	}
	return b
}

// An object keeps its fields in order, so that walks are the same each
// time.
type object []field

type field struct {
	key   string
	value any
}

func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.key)
		v, err := json.Marshal(f.value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// decodeOrdered decodes JSON with objects as ordered objects and numbers
// as written.
func decodeOrdered(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("tgfake: data after the JSON value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		o := object{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			o = append(o, field{k.(string), v})
		}
		_, err := dec.Token()
		return o, err
	case json.Delim('['):
		a := []any{}
		for dec.More() {
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := dec.Token()
		return a, err
	}
	return tok, nil
}

func countFields(v any) int {
	n := 0
	switch x := v.(type) {
	case object:
		for _, f := range x {
			n += 1 + countFields(f.value)
		}
	case []any:
		for _, e := range x {
			n += countFields(e)
		}
	}
	return n
}

// without copies v, leaving out each field for which drop, called once
// per field in walk order, says so.
func without(v any, drop func() bool) any {
	switch x := v.(type) {
	case object:
		out := object{}
		for _, f := range x {
			if drop() {
				// The fields inside still count, so that a field's
				// place does not depend on what was dropped before it.
				countSkip(f.value, drop)
				continue
			}
			out = append(out, field{f.key, without(f.value, drop)})
		}
		return out
	case []any:
		out := make([]any, 0, len(x))
		for _, e := range x {
			out = append(out, without(e, drop))
		}
		return out
	}
	return v
}

func countSkip(v any, drop func() bool) {
	for range countFields(v) {
		drop()
	}
}

// Raw queues update, a JSON object, as the next update, with the fake's
// next update_id in place of any it has, and returns that id. It is for
// updates the other methods do not make: any kind, any fields.
func (s *Server) Raw(update []byte) (int, error) {
	v, err := decodeOrdered(update)
	if err != nil {
		return 0, err
	}
	o, ok := v.(object)
	if !ok {
		return 0, errors.New("tgfake: an update must be a JSON object")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.nextUpd
	s.nextUpd++
	o = slices.DeleteFunc(o, func(f field) bool { return f.key == "update_id" })
	b, err := json.Marshal(append(object{{"update_id", id}}, o...))
	if err != nil {
		return 0, err
	}
	s.updates = append(s.updates, b)
	s.updateIDs = append(s.updateIDs, id)
	s.notifyLocked()
	return id, nil
}
