/**
 * Every member of pi's ExtensionUIContext that a programmatic UI does not act on, each doing
 * nothing, as pi's RPC mode does: a test's UI spreads it and adds its dialogs (and its theme).
 */
import type { ExtensionUIContext } from "@earendil-works/pi-coding-agent";

/** The dialogs and the theme a UI built on quietUI supplies itself. */
type Supplied = "select" | "input" | "confirm" | "editor" | "notify" | "theme";

/** The no-op part of a UI context. */
export function quietUI(): Omit<ExtensionUIContext, Supplied> {
	const noop = (): void => {};
	return {
		custom: async () => undefined as never,
		onTerminalInput: () => noop,
		setStatus: noop,
		setWorkingMessage: noop,
		setWorkingVisible: noop,
		setWorkingIndicator: noop,
		setHiddenThinkingLabel: noop,
		setWidget: noop,
		setFooter: noop,
		setHeader: noop,
		setTitle: noop,
		pasteToEditor: noop,
		setEditorText: noop,
		getEditorText: () => "",
		addAutocompleteProvider: noop,
		setEditorComponent: noop,
		getEditorComponent: () => undefined,
		getAllThemes: () => [],
		getTheme: () => undefined,
		setTheme: () => ({ success: false, error: "not supported" }),
		getToolsExpanded: () => false,
		setToolsExpanded: noop,
	};
}
