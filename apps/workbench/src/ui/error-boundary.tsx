import type { ErrorInfo, ReactNode } from 'react'
import { Component } from 'react'

interface State {
  readonly error: Error | undefined
}

/** Shows a render failure as text (never as HTML) instead of an empty page. */
export class ErrorBoundary extends Component<{ readonly children: ReactNode; readonly label: string }, State> {
  override state: State = { error: undefined }

  static getDerivedStateFromError(error: unknown): State {
    return { error: error instanceof Error ? error : new Error(String(error)) }
  }

  override componentDidCatch(error: Error, info: ErrorInfo): void {
    console.error(`${this.props.label} failed:`, error, info.componentStack)
  }

  override render() {
    if (this.state.error === undefined) return this.props.children
    return (
      <div className="banner error" role="alert">
        <p>
          The {this.props.label} failed: {this.state.error.message}
        </p>
        <button type="button" onClick={() => this.setState({ error: undefined })}>
          Try again
        </button>
      </div>
    )
  }
}
