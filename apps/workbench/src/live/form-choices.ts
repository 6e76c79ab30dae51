import type { Json } from '../recording/recording-types.ts'

/**
 * Reads what a person has chosen so far in an `<InterruptForm>` from the rendered form: per
 * interrupt (fieldsets in batch order), the decision radio and every field by its label. The
 * SDK form keeps its drafts internal, so the recorder observes the form the way the person sees
 * it. On submit, the exact entries handed to `resume` are recorded as well.
 */
export function readFormChoices(root: ParentNode, interruptIds: readonly string[]): { [interruptId: string]: Json } {
  const choices: { [interruptId: string]: Json } = {}
  const fieldsets = Array.from(root.querySelectorAll<HTMLFieldSetElement>('form fieldset')).filter(
    (fieldset) => fieldset.parentElement?.closest('fieldset') === null,
  )
  fieldsets.forEach((fieldset, index) => {
    const id = interruptIds[index]
    if (id === undefined) return
    const choice: { [key: string]: Json } = {}
    const decision = fieldset.querySelector<HTMLInputElement>('input[type="radio"]:checked')
    if (decision) choice.decision = decision.value
    const fields: { [label: string]: Json } = {}
    for (const control of Array.from(
      fieldset.querySelectorAll<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>('input, select, textarea'),
    )) {
      if (control instanceof HTMLInputElement && control.type === 'radio') continue
      const name = labelOf(control)
      if (control instanceof HTMLInputElement && control.type === 'checkbox') fields[name] = control.checked
      else if (control instanceof HTMLSelectElement)
        fields[name] = control.selectedOptions[0]?.value === '' ? null : (control.selectedOptions[0]?.text ?? null)
      else if (control.value !== '') fields[name] = control.value
    }
    if (Object.keys(fields).length > 0) choice.fields = fields
    choices[id] = choice
  })
  return choices
}

function labelOf(control: HTMLElement): string {
  const id = control.id
  const label = id
    ? Array.from(control.ownerDocument.querySelectorAll('label')).find((l) => l.htmlFor === id)
    : control.closest('label')
  const text = label?.textContent?.trim()
  return text !== undefined && text !== '' ? text : (control.getAttribute('name') ?? control.id ?? 'field')
}
