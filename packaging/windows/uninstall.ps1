<#
.SYNOPSIS
  Remove what install.ps1 added for the current user: the app folder, the Start menu shortcut,
  the file types' "Open with" entries (a default it set is put back to none) and the uninstall
  entry. Files you opened or saved are not touched.
.PARAMETER DryRun
  Print what would be done, change nothing.
#>
param([switch]$DryRun)
$ErrorActionPreference = "Continue"

$AppName = "Checkpoint Inspector"
$ProgId = "CheckpointInspector.Checkpoint"
$UninstallKey = "HKCU:\Software\Microsoft\Windows\CurrentVersion\Uninstall\CheckpointInspector"
$Owned = @(".safetensors", ".bpk")
$OpenWithOnly = @(".pt", ".pth", ".bin", ".ckpt", ".gguf")

function Do-Step([string]$What, [scriptblock]$Action) {
    if ($DryRun) { Write-Host "would: $What" } else { Write-Host $What; & $Action }
}

$Prefix = (Get-ItemProperty $UninstallKey -ErrorAction SilentlyContinue).InstallLocation
foreach ($ext in $Owned + $OpenWithOnly) {
    Do-Step "remove $AppName from $ext's Open with" {
        Remove-ItemProperty "HKCU:\Software\Classes\$ext\OpenWithProgids" -Name $ProgId -ErrorAction SilentlyContinue
        $current = (Get-ItemProperty "HKCU:\Software\Classes\$ext" -ErrorAction SilentlyContinue)."(default)"
        if ($current -eq $ProgId) { Remove-ItemProperty "HKCU:\Software\Classes\$ext" -Name "(default)" }
    }
}
Do-Step "unregister $ProgId" {
    Remove-Item -Recurse -Force "HKCU:\Software\Classes\$ProgId" -ErrorAction SilentlyContinue
}
Do-Step "remove the Start menu shortcut" {
    Remove-Item -Force (Join-Path ([Environment]::GetFolderPath("Programs")) "$AppName.lnk") -ErrorAction SilentlyContinue
}
Do-Step "remove the uninstall entry" {
    Remove-Item -Recurse -Force $UninstallKey -ErrorAction SilentlyContinue
}
if ($Prefix -and (Test-Path $Prefix)) {
    # the script may run from inside the folder it removes: leave that to a detached shell
    Do-Step "remove $Prefix" {
        Start-Process -WindowStyle Hidden powershell.exe -ArgumentList "-NoProfile -Command Start-Sleep 2; Remove-Item -Recurse -Force '$Prefix'"
    }
}
