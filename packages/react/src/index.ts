'use client'
/**
 * `@interlude/react`: `useChat` over the framework-free `ChatRuntime`, plus the form helpers.
 * The core is also available alone as `@interlude/react/core`.
 */
export * from './core/index.ts'
export { useChat } from './use-chat.ts'
export type { ChatCommands, UseChatOptions, UseChatResult } from './use-chat.ts'
export { useInterruptForm, isApproval, editedArgsSchema, UNANSWERED } from './forms/use-interrupt-form.ts'
export type {
  FormCheck,
  InterruptDraft,
  InterruptDrafts,
  PayloadPath,
  UseInterruptFormOptions,
  UseInterruptFormResult,
} from './forms/use-interrupt-form.ts'
export { InterruptForm } from './forms/interrupt-form.tsx'
export type { InterruptFormClassNames, InterruptFormProps } from './forms/interrupt-form.tsx'
export type {
  InterruptDecision,
  InterruptRenderer,
  InterruptRendererProps,
  InterruptRenderers,
} from './forms/interrupt-renderer.ts'
export { InlineApproval, InterruptFormProvider, useInterrupt } from './forms/interrupt-context.tsx'
export type { InlineApprovalProps, InterruptFormProviderProps } from './forms/interrupt-context.tsx'
export { SchemaField } from './forms/schema-field.tsx'
export type { Schema, SchemaFieldProps } from './forms/schema-field.tsx'
export { interruptTitle } from './forms/interrupt-title.ts'
export { validatePayload } from './forms/validate-payload.ts'
export type { FieldError } from './forms/validate-payload.ts'
export { useEarlierMessages } from './use-earlier-messages.ts'
export type { UseEarlierMessagesResult } from './use-earlier-messages.ts'
export { useCompletion } from './use-completion.ts'
export type { UseCompletionResult } from './use-completion.ts'
