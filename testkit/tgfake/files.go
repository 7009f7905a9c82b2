package tgfake

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// MaxDownload is the cloud Bot API's limit on files a bot may download.
const MaxDownload = 20 << 20

// An Upload is a file a user sends: a voice note, an audio file, a video
// note or a document.
type Upload struct {
	ChatID, UserID int64
	Kind           string // "voice", "audio", "video_note", "photo" or "document"
	Name           string // a document's file name
	MIMEType       string
	Data           []byte
	// Size, when set, is the size Telegram reports instead of len(Data),
	// as for a file too big to download.
	Size    int
	Caption string
	// MediaGroupID, when set, makes the message an item of an album (see
	// SendAlbum).
	MediaGroupID string
	// Topic is the forum topic the message is sent in (see Incoming).
	Topic int
}

// SendFile queues a message carrying a file and returns its message id.
func (s *Server) SendFile(up Upload) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sendFileLocked(up)
}

// SendAlbum queues the items of an album at once, so that one getUpdates
// answer holds them all (as Telegram usually, not always, delivers an
// album), and returns their message ids. Items without a MediaGroupID get
// "album".
func (s *Server) SendAlbum(ups ...Upload) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]int, len(ups))
	for i, up := range ups {
		if up.MediaGroupID == "" {
			up.MediaGroupID = "album"
		}
		ids[i] = s.sendFileLocked(up)
	}
	return ids
}

func (s *Server) sendFileLocked(up Upload) int {
	size := up.Size
	if size == 0 {
		size = len(up.Data)
	}
	s.nextFile++
	id := fmt.Sprintf("file-%d", s.nextFile)
	if s.files == nil {
		s.files = map[string]*upload{}
	}
	s.files[id] = &upload{data: up.Data, size: size, path: fmt.Sprintf("%s/%s%s", up.Kind, id, ext(up))}

	msgID := s.newMsgIDLocked(up.ChatID)
	m := &tgbotapi.Message{
		MessageID: msgID, Date: int(time.Now().Unix()), Chat: s.chatLocked(up.ChatID),
		From:    &tgbotapi.User{ID: up.UserID, FirstName: fmt.Sprintf("user%d", up.UserID)},
		Caption: up.Caption, CaptionEntities: entities(up.Caption), MediaGroupID: up.MediaGroupID,
	}
	uniq := "u" + id
	switch up.Kind {
	case "voice":
		m.Voice = &tgbotapi.Voice{FileID: id, FileUniqueID: uniq, Duration: 3, MimeType: up.MIMEType, FileSize: size}
	case "audio":
		m.Audio = &tgbotapi.Audio{FileID: id, FileUniqueID: uniq, Duration: 3, MimeType: up.MIMEType, FileSize: size, FileName: up.Name}
	case "video_note":
		m.VideoNote = &tgbotapi.VideoNote{FileID: id, FileUniqueID: uniq, Duration: 3, FileSize: size}
	case "photo":
		// Telegram sends each photo in several sizes, largest last.
		m.Photo = []tgbotapi.PhotoSize{{FileID: id, FileUniqueID: uniq, Width: 1280, Height: 960, FileSize: size}}
	default:
		m.Document = &tgbotapi.Document{FileID: id, FileUniqueID: uniq, FileName: up.Name, MimeType: up.MIMEType, FileSize: size}
	}
	sent := &Message{ID: msgID, ChatID: up.ChatID, FromID: up.UserID, Caption: up.Caption, Plain: up.Caption, DocumentName: up.Name, Topic: up.Topic, Thread: up.Topic}
	s.msgs[up.ChatID] = append(s.msgs[up.ChatID], sent)
	s.queueLocked(tgbotapi.Update{Message: m}, "message", sent)
	return msgID
}

func ext(up Upload) string {
	switch {
	case up.Kind == "voice":
		return ".oga"
	case up.Kind == "video_note":
		return ".mp4"
	case up.Kind == "photo":
		return ".jpg"
	case strings.Contains(up.Name, "."):
		return up.Name[strings.LastIndexByte(up.Name, '.'):]
	}
	return ""
}

// An upload is a file the fake holds.
type upload struct {
	data []byte
	size int
	path string
}

// getFileLocked answers getFile: a path to download from, or Telegram's
// refusal of a file over MaxDownload.
func (s *Server) getFileLocked(p map[string]string) (any, *apiError) {
	f := s.files[p["file_id"]]
	if f == nil {
		return nil, badRequest("Bad Request: invalid file_id")
	}
	if f.size > MaxDownload {
		return nil, badRequest("Bad Request: file is too big")
	}
	return tgbotapi.File{FileID: p["file_id"], FileUniqueID: "u" + p["file_id"], FileSize: f.size, FilePath: f.path}, nil
}

// serveFile serves /file/bot<token>/<path>, as the Bot API does.
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/file/bot"+Token+"/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	var data []byte
	for _, f := range s.files {
		if f.path == rest {
			data = f.data
		}
	}
	s.downloads++
	s.mu.Unlock()
	if data == nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	_, _ = w.Write(data)
}

// Downloads counts the requests for files.
func (s *Server) Downloads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.downloads
}

// SetChatAdmin makes user an administrator of chat, as getChatMember
// reports it.
func (s *Server) SetChatAdmin(chat, user int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.admins == nil {
		s.admins = map[int64]map[int64]bool{}
	}
	if s.admins[chat] == nil {
		s.admins[chat] = map[int64]bool{}
	}
	s.admins[chat][user] = true
}

// RemoveChatAdmin makes user a plain member of chat again, as a demotion
// in Telegram would.
func (s *Server) RemoveChatAdmin(chat, user int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.admins[chat], user)
}

// getChatMemberLocked answers getChatMember: "administrator" for the
// users SetChatAdmin named, "member" for others; the user's first name
// is "user<id>", as in the updates Send queues.
func (s *Server) getChatMemberLocked(p map[string]string) (any, *apiError) {
	chat, aerr := strconv.ParseInt(p["chat_id"], 10, 64)
	user, uerr := strconv.ParseInt(p["user_id"], 10, 64)
	if aerr != nil || uerr != nil {
		return nil, badRequest("Bad Request: chat_id and user_id are required")
	}
	status := "member"
	if s.admins[chat][user] {
		status = "administrator"
	}
	return tgbotapi.ChatMember{User: &tgbotapi.User{ID: user, FirstName: fmt.Sprintf("user%d", user)}, Status: status}, nil
}
