import { describe, expect, it } from 'vitest'
import { parseCliArgs, USAGE } from './cli-args.ts'
import { FLAGS } from './cli-flags.ts'

describe('the flag table', () => {
  it('the usage lists every flag, with its default where it has one', () => {
    for (const [name, flag] of Object.entries(FLAGS)) {
      const line = USAGE.split('\n').findIndex((text) => text.includes(`--${name} `) || text.endsWith(`--${name}`))
      expect(line, name).toBeGreaterThan(0)
      const value: unknown = 'default' in flag ? flag.default : 'shown' in flag ? flag.shown : undefined
      if (value !== undefined) {
        // The help may wrap: the default is on the flag's line or one of the next.
        const text = USAGE.split('\n')
          .slice(line, line + 4)
          .join(' ')
          .replace(/\s+/g, ' ')
        expect(text, name).toContain(`(default ${'env' in flag ? `${flag.env}, else ` : ''}${String(value)}`)
      }
    }
  })

  it('each numeric flag refuses text, negative numbers and an empty value; integers refuse fractions', () => {
    const env = { INTERLUDE_SESSION_SECRET: 'x'.repeat(32) }
    for (const [name, flag] of Object.entries(FLAGS)) {
      if (flag.type !== 'integer' && flag.type !== 'number') continue
      // Flags that need another one: a PostgreSQL URL, the OpenAI model.
      const context = ['--db', 'postgres://h/d', ...(name.startsWith('model-') ? ['--model', 'openai'] : [])]
      for (const bad of ['x', '-1', '', ...(flag.type === 'integer' ? ['1.5'] : [])])
        expect(() => parseCliArgs([...context, `--${name}=${bad}`], env), `--${name}=${bad}`).toThrow(`--${name}`)
    }
  })
})
