package llmfake

import (
	"encoding/json"
	"io"
	"net/http"
)

// A Transcription is one request to /audio/transcriptions.
type Transcription struct {
	Model    string
	FileName string
	Audio    []byte
	// Authorization is the request's header, to check which key was sent.
	Authorization string
}

// A Transcriber answers a transcription with its text, or with an HTTP
// error status when status is not 0.
type Transcriber func(Transcription) (text string, status int)

// SetTranscriber makes the server answer /v1/audio/transcriptions with f,
// as OpenAI's endpoint does: a multipart form with "file" and "model" in,
// {"text": …} out.
func (s *Server) SetTranscriber(f Transcriber) {
	s.mu.Lock()
	s.transcriber = f
	s.mu.Unlock()
}

// Transcriptions returns the transcription requests received so far.
func (s *Server) Transcriptions() []Transcription {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Transcription(nil), s.transcriptions...)
}

func (s *Server) transcribe(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseMultipartForm(32 << 20); err != nil {
		s.problem("transcription request is not a multipart form: %v", err)
		writeError(w, Reply{Status: http.StatusBadRequest, Error: err.Error()})
		return
	}
	f, hdr, err := r.FormFile("file")
	if err != nil || r.FormValue("model") == "" {
		s.problem("transcription request without file or model")
		writeError(w, Reply{Status: http.StatusBadRequest, Error: "file and model are required"})
		return
	}
	defer f.Close()
	audio, err := io.ReadAll(f)
	if err != nil {
		return
	}
	t := Transcription{Model: r.FormValue("model"), FileName: hdr.Filename, Audio: audio, Authorization: r.Header.Get("Authorization")}
	s.mu.Lock()
	s.transcriptions = append(s.transcriptions, t)
	fn := s.transcriber
	s.mu.Unlock()
	if fn == nil {
		writeError(w, Reply{Status: http.StatusNotFound, Error: "no transcriptions here"})
		return
	}
	text, status := fn(t)
	if status != 0 {
		writeError(w, Reply{Status: status})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"text": text})
}
