import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import { App } from './app.tsx'
import './styles.css'
// The rest of the sheet, by area, in cascade order.
import './styles/live.css'
import './styles/replay.css'
import './styles/forms.css'
import './styles/approvals.css'
import './styles/queue.css'
import './styles/versions.css'

const root = document.getElementById('root')
if (root === null) throw new Error('#root is missing from index.html')
createRoot(root).render(
  <StrictMode>
    <App />
  </StrictMode>,
)
