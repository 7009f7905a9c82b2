package oauth

// sealing returns the Sealer of sign-ins, or ErrNoKey without a key.
func (m *Manager) sealing(bool) (*Sealer, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.sealer == nil {
		return nil, ErrNoKey
	}
	return m.sealer, nil
}
