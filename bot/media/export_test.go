package media

// SetPDFHooks sets what r calls as a PDF waits for a reader's turn and
// once it has one.
func SetPDFHooks(r *Reader, waiting, reading func()) {
	r.pdfWaiting, r.pdfReading = waiting, reading
}
