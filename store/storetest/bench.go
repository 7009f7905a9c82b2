package storetest

import (
	"encoding/binary"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpgram/mcpgram/store"
)

// Bench measures what a turn and an update write, the same way on each
// engine, so their figures can be set side by side.
func Bench(b *testing.B, open Open) {
	b.Run("AppendTurn", func(b *testing.B) { benchAppendTurn(b, open) })
	b.Run("AppendTurnParallel", func(b *testing.B) { benchAppendTurnParallel(b, open) })
	b.Run("InboxPutDone", func(b *testing.B) { benchInboxPutDone(b, open) })
	b.Run("Messages", func(b *testing.B) { benchMessages(b, open) })
	b.Run("MediaPutGet", func(b *testing.B) { benchMediaPutGet(b, open) })
}

// benchMediaPutGet stores a new 200 KB image (a Telegram photo's usual
// size) and reads it back, as a turn with a photo does.
func benchMediaPutGet(b *testing.B, open Open) {
	db := open(b)
	ctx := b.Context()
	img := make([]byte, 200<<10)
	var n uint64
	b.SetBytes(int64(len(img)))
	b.ReportAllocs()
	for b.Loop() {
		n++
		binary.LittleEndian.PutUint64(img, n) // a new image each time
		ref, err := db.MediaPut(ctx, "image/jpeg", img)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := db.MediaGet(ctx, ref); err != nil {
			b.Fatal(err)
		}
	}
}

var (
	benchUser  = store.Message{Role: "user", Content: "What is the weather in Lisbon tomorrow?"}
	benchReply = store.Message{Role: "assistant", Content: strings.Repeat("It will be sunny. ", 30), PromptTokens: 900, CompletionTokens: 120}
	benchCall  = store.ToolCall{UserID: "42", ChatID: "bench", Server: "weather", Tool: "forecast", Arguments: `{"city":"Lisbon"}`, Status: "ok", ResultBytes: 512}
)

// benchAppendTurn stores one turn: a message pair and an audit row, in one
// transaction, to the chat's active conversation.
func benchAppendTurn(b *testing.B, open Open) {
	db := open(b)
	ctx := b.Context()
	w := store.TurnWrite{ChatID: "bench", Messages: []store.Message{benchUser, benchReply}, ToolCalls: []store.ToolCall{benchCall}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := db.AppendTurn(ctx, w); err != nil {
			b.Fatal(err)
		}
	}
}

// benchAppendTurnParallel is AppendTurn from many chats at once.
func benchAppendTurnParallel(b *testing.B, open Open) {
	db := open(b)
	ctx := b.Context()
	var chat atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(4)
	b.RunParallel(func(pb *testing.PB) {
		w := store.TurnWrite{ChatID: "bench" + string(rune('a'+chat.Add(1))), Messages: []store.Message{benchUser, benchReply}, ToolCalls: []store.ToolCall{benchCall}}
		for pb.Next() {
			if _, err := db.AppendTurn(ctx, w); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// benchInboxPutDone stores one update and marks it done, as every update
// goes through the inbox.
func benchInboxPutDone(b *testing.B, open Open) {
	db := open(b)
	ctx := b.Context()
	payload := []byte(`{"update_id":1,"message":{"message_id":7,"from":{"id":42,"is_bot":false,"first_name":"A"},"chat":{"id":42,"type":"private"},"date":1700000000,"text":"hello there"}}`)
	var id int64
	b.ReportAllocs()
	for b.Loop() {
		id++
		if err := db.InboxPut(ctx, store.InboxItem{UpdateID: id, ChatID: "42", Payload: payload}); err != nil {
			b.Fatal(err)
		}
		if err := db.InboxDone(ctx, id); err != nil {
			b.Fatal(err)
		}
	}
}

// benchMessages reads a conversation of 50 messages, as each turn does.
func benchMessages(b *testing.B, open Open) {
	db := open(b)
	ctx := b.Context()
	conv := Active(b, db, "bench")
	for range 25 {
		if err := AppendMessages(ctx, db, conv, benchUser, benchReply); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := db.Messages(ctx, conv); err != nil {
			b.Fatal(err)
		}
	}
}
