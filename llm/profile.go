package llm

// A Profile is one model the bot can answer with, under the name the
// operator gave it: the endpoint and key, the model, how it is called and
// how its prompt is framed. Configuration builds them (the OPENAI_*
// settings make the one named "default"); a chat picks one with /model.
type Profile struct {
	// Name is unique, and fit for a button (see the config's rules).
	Name    string
	BaseURL string
	// APIKeyEnv names the variable the key came from, for messages;
	// APIKey is the key itself, a secret.
	APIKeyEnv string
	APIKey    string
	Model     string
	// Temperature is the usual one (the agent cools it after mistakes).
	Temperature float32
	// MaxTokens caps one reply; 0 leaves it to the endpoint.
	MaxTokens int
	// ContextTokens is the estimated budget of what one call sends.
	ContextTokens int
	// ToolCalling is how tools are called: "xml" (written in the reply),
	// "native" (the API's function calling) or "auto".
	ToolCalling string
	// Vision says the model sees images.
	Vision bool
	// Prompt is the prompt variant: "generic", "llama" or "code".
	Prompt string
}
