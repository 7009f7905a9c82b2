package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/sqlite"
)

// A chat's turn is stored in one transaction, and read back by the next
// turn. The file keeps it across restarts.
func ExampleOpen() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "mcpgram-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "mcpgram.db")

	db, err := sqlite.Open(ctx, path)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := db.CurrentConversation(ctx, "42"); errors.Is(err, store.ErrNotFound) {
		fmt.Println("chat 42 has no conversation yet")
	}
	conv, err := db.AppendTurn(ctx, store.TurnWrite{ChatID: "42", Messages: []store.Message{
		{Role: "user", Content: "what is 2+2?"},
		{Role: "assistant", Content: "4"},
	}})
	if err != nil {
		log.Fatal(err)
	}
	db.Close()

	db, err = sqlite.Open(ctx, path) // as after a restart
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if current, _ := db.CurrentConversation(ctx, "42"); current == conv {
		fmt.Println("chat 42 goes on in the same conversation")
	}
	msgs, err := db.Messages(ctx, conv)
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range msgs {
		fmt.Printf("%s: %s\n", m.Role, m.Content)
	}
	// Output:
	// chat 42 has no conversation yet
	// chat 42 goes on in the same conversation
	// user: what is 2+2?
	// assistant: 4
}
