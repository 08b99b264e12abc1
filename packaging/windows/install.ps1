<#
.SYNOPSIS
  Install Checkpoint Inspector for the current user (no administrator rights): the one-folder
  PyInstaller bundle, a Start menu shortcut, and the file types it reads, so Explorer offers
  "Open with Checkpoint Inspector". uninstall.ps1 (copied beside the app) removes everything.

.PARAMETER Bundle
  The bundle folder (default: the one this script is in, else the repo's dist\checkpoint-inspector).
.PARAMETER Prefix
  Where the app goes (default: %LOCALAPPDATA%\Programs\checkpoint-inspector).
.PARAMETER SetDefault
  Also make the app the default for .safetensors and .bpk when no other app owns them. PyTorch
  files (.pt .pth .bin .ckpt) and .gguf are only added to "Open with": other programs own them.
.PARAMETER DryRun
  Print what would be done, change nothing.
#>
param(
    [string]$Bundle = "",
    [string]$Prefix = "$env:LOCALAPPDATA\Programs\checkpoint-inspector",
    [switch]$SetDefault,
    [switch]$DryRun
)
$ErrorActionPreference = "Stop"
$ScriptDir = Split-Path -Parent $MyInvocation.MyCommand.Path

$AppName = "Checkpoint Inspector"
$ProgId = "CheckpointInspector.Checkpoint"
$UninstallKey = "HKCU:\Software\Microsoft\Windows\CurrentVersion\Uninstall\CheckpointInspector"
# every format the app reads (as packaging/checkpoint-inspector.spec's DOCUMENT_TYPES)
$Owned = @(".safetensors", ".bpk")
$OpenWithOnly = @(".pt", ".pth", ".bin", ".ckpt", ".gguf")

function Do-Step([string]$What, [scriptblock]$Action) {
    if ($DryRun) { Write-Host "would: $What" } else { Write-Host $What; & $Action }
}

if (-not $Bundle) {
    $Bundle = if (Test-Path "$ScriptDir\checkpoint-inspector-gui.exe") { $ScriptDir }
              else { Join-Path $ScriptDir "..\..\dist\checkpoint-inspector" }
}
$Gui = Join-Path $Bundle "checkpoint-inspector-gui.exe"
if (-not (Test-Path $Gui)) {
    Write-Error "install.ps1: no checkpoint-inspector-gui.exe in $Bundle (build it with make package, or give -Bundle DIR)"
    exit 2
}

Do-Step "copy $Bundle to $Prefix" {
    if (Test-Path $Prefix) { Remove-Item -Recurse -Force $Prefix }
    Copy-Item -Recurse $Bundle $Prefix
    Copy-Item (Join-Path $ScriptDir "uninstall.ps1") $Prefix
}
$Exe = Join-Path $Prefix "checkpoint-inspector-gui.exe"

Do-Step "register $ProgId (open: `"$Exe`" `"%1`")" {
    $key = "HKCU:\Software\Classes\$ProgId"
    New-Item -Force "$key\shell\open\command" | Out-Null
    Set-ItemProperty $key "(default)" "Checkpoint (Checkpoint Inspector)"
    New-Item -Force "$key\DefaultIcon" -Value "`"$Exe`",0" | Out-Null
    Set-ItemProperty "$key\shell\open\command" "(default)" "`"$Exe`" `"%1`""
}
foreach ($ext in $Owned + $OpenWithOnly) {
    Do-Step "offer $AppName for $ext (Open with)" {
        New-Item -Force "HKCU:\Software\Classes\$ext\OpenWithProgids" | Out-Null
        New-ItemProperty -Force "HKCU:\Software\Classes\$ext\OpenWithProgids" -Name $ProgId -Value "" -PropertyType String | Out-Null
    }
}
if ($SetDefault) {
    foreach ($ext in $Owned) {
        $current = (Get-ItemProperty "HKCU:\Software\Classes\$ext" -ErrorAction SilentlyContinue)."(default)"
        if (-not $current) {
            Do-Step "make $AppName the default for $ext" {
                Set-ItemProperty "HKCU:\Software\Classes\$ext" "(default)" $ProgId
            }
        }
    }
}
Do-Step "Start menu shortcut" {
    $lnk = Join-Path ([Environment]::GetFolderPath("Programs")) "$AppName.lnk"
    $shell = New-Object -ComObject WScript.Shell
    $s = $shell.CreateShortcut($lnk)
    $s.TargetPath = $Exe
    $s.Save()
}
Do-Step "add to Apps & features (uninstall entry)" {
    New-Item -Force $UninstallKey | Out-Null
    Set-ItemProperty $UninstallKey "DisplayName" $AppName
    Set-ItemProperty $UninstallKey "InstallLocation" $Prefix
    Set-ItemProperty $UninstallKey "DisplayIcon" "`"$Exe`",0"
    Set-ItemProperty $UninstallKey "NoModify" 1
    Set-ItemProperty $UninstallKey "UninstallString" "powershell.exe -NoProfile -ExecutionPolicy Bypass -File `"$Prefix\uninstall.ps1`""
}
# Explorer re-reads file associations when told they changed
Do-Step "tell Explorer the associations changed" {
    Add-Type -Namespace Win32 -Name Shell -MemberDefinition '[DllImport("shell32.dll")] public static extern void SHChangeNotify(int e, int f, System.IntPtr a, System.IntPtr b);'
    [Win32.Shell]::SHChangeNotify(0x08000000, 0, [IntPtr]::Zero, [IntPtr]::Zero)
}
