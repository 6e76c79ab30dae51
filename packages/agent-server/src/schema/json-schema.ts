/** A JSON Schema object (draft-07 vocabulary, local `$ref`s only): what tools, models and validators share. */
export type JsonSchema = Record<string, unknown>
